"""viva engine: everything that is not the UI. Never imports textual."""

__version__ = "0.1.0"
