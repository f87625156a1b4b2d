"""Example performers."""
