"""tsumugi_performer."""
