"""privbandit layer: audits."""
