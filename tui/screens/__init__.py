"""Screens of the viva app."""
