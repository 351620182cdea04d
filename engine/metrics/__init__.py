"""Every figure a user sees is computed here, never in a widget."""
