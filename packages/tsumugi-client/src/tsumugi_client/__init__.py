"""tsumugi_client."""
