"""Widgets of the viva app."""
