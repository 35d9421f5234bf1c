"""privbandit layer: mechanisms."""
