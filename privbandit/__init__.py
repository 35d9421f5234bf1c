"""privbandit layer: privbandit."""
