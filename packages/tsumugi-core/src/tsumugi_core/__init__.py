"""tsumugi_core."""
