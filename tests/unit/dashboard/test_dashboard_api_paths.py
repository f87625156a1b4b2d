"""Every /api path the dashboard's JavaScript calls is a route the REST API defines, ids percent-encoded."""

from __future__ import annotations

import re
from importlib import resources

from tsumugi_scheduler.api.operations import OPERATIONS
from tsumugi_scheduler.api.session import SESSION_PATH
from tsumugi_scheduler.dashboard import SCRIPT_ORDER

# The REST API's own route table, so a renamed or removed route fails here rather than in a browser.
# "{}" stands for one path segment ({id}, {binding}).
REST_ROUTES = frozenset((op.method, re.sub(r"\{\w+\}", "{}", op.path)) for op in OPERATIONS)
# /api/session (sign-in, ADR-0064) is answered by the API's gate, outside the route table.
ROUTE_PATHS = frozenset(path for _, path in REST_ROUTES) | {SESSION_PATH}

# A string or template literal that starts with /api/.
_API_LITERAL = re.compile(r"""(['"`])(/api/[^'"`]*)\1""")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


def _scripts() -> str:
    js = resources.files("tsumugi_scheduler.dashboard").joinpath("assets", "js")
    return "\n".join(js.joinpath(name).read_text(encoding="utf-8") for name in SCRIPT_ORDER)


def _api_literals() -> list[str]:
    return [match[2] for match in _API_LITERAL.finditer(_scripts())]


def test_the_scripts_call_the_api_only_through_the_paths_table():
    literals = _api_literals()

    assert len(literals) >= 20
    # Outside the API table no code spells a path, so the table is the whole list.
    table = re.search(r"const API = \{(.*?)\n\};", _scripts(), re.DOTALL)
    assert table is not None
    assert sorted(m[2] for m in _API_LITERAL.finditer(table[1])) == sorted(literals)


def test_every_api_path_is_a_rest_route():
    unknown = {_PLACEHOLDER.sub("{}", literal) for literal in _api_literals()} - ROUTE_PATHS

    assert unknown == set()


def test_every_path_segment_from_data_is_percent_encoded():
    # enc = encodeURIComponent: a job id's "#" must go as %23, or the browser would cut the URL there.
    assert "const enc = encodeURIComponent;" in _scripts()
    for literal in _api_literals():
        for expression in _PLACEHOLDER.findall(literal):
            assert re.fullmatch(r"enc\(\w+\)", expression), f"{literal}: {expression} is not encoded"


def test_the_calls_cover_each_dashboard_feature():
    paths = {_PLACEHOLDER.sub("{}", literal) for literal in _api_literals()}

    assert {
        "/api/jobs",
        "/api/jobs/{}",
        "/api/jobs/{}/cancel",
        "/api/jobs/{}/retry",
        "/api/jobs/{}/explain",
        "/api/jobs/bulk-retry",
        "/api/jobs/bulk-cancel",
        "/api/bindings/{}/policy",
        "/api/bindings/{}/policy/reset",
        "/api/metrics",
        "/api/diagnostics",
        "/api/stats",
    } <= paths


def test_requests_send_same_origin_credentials():
    assert "credentials: 'same-origin'" in _scripts()
    assert re.search(r"""fetch\((?!path, init\))""", _scripts()) is None  # the one fetch call is apiCall's
