"""The dashboard's scripts share one inline <script>: a name declared at top level in two files breaks the page
(a second `const` is a SyntaxError that stops every script; a second `function` silently replaces the first)."""

from __future__ import annotations

import re
from collections import Counter

from tsumugi_scheduler.dashboard.page import SCRIPT_ORDER, render_dashboard

_TOP_LEVEL = re.compile(
    r"^(?:const|let|var|class|function|async function)\s+([A-Za-z_$][\w$]*)", re.MULTILINE
)


def test_no_name_is_declared_at_top_level_twice_in_the_page() -> None:
    page = render_dashboard()
    script = page[page.index("<script>\n") :]
    counts = Counter(_TOP_LEVEL.findall(script))
    assert {name: n for name, n in counts.items() if n > 1} == {}
    assert len(SCRIPT_ORDER) == len(set(SCRIPT_ORDER))
