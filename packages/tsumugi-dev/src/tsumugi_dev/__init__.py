"""tsumugi_dev."""
