"""Attention Lab: an auto-graded kit on positional encoding and self-attention."""

__version__ = "0.1.0"
