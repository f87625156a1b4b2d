"""The dashboard the scheduler Worker serves at ``/``: one self-contained page over the REST API.

Serve `render_dashboard` for every ``GET`` outside ``/api`` (without auth: the page holds no data and must be
able to ask for a token), only when the REST API is enabled.
"""

from tsumugi_scheduler.dashboard.page import (
    SCRIPT_ORDER,
    clear_dashboard_cache,
    content_security_policy,
    dashboard_headers,
    render_dashboard,
)

__all__ = [
    "SCRIPT_ORDER",
    "clear_dashboard_cache",
    "content_security_policy",
    "dashboard_headers",
    "render_dashboard",
]
