"""viva terminal app (Textual)."""
