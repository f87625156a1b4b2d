"""tsumugi_scheduler."""
