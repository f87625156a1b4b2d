"""A dependency-free headless Chromium driver: load a page, let it run, return the DOM (or a screenshot).

``--virtual-time-budget`` lets the page's timers and fetches settle in virtual time, so no test sleeps.
"""

from __future__ import annotations

import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")

# Required on this machine (and harmless elsewhere): no sandbox, no GPU, no background traffic. Playwright's launch
# (playwright_chromium) uses the same; it sets headless mode and the window itself.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
_FLAGS = ["--headless", *CHROMIUM_FLAGS, "--window-size=1280,900"]


def require_chromium() -> None:
    if not CHROMIUM.exists():
        raise AssertionError(
            f"{CHROMIUM} is missing: the dashboard browser tests need Chromium "
            "(Debian: apt-get install -y chromium)"
        )


def _run(url: str, action: list[str], budget_ms: int) -> str:
    require_chromium()
    with tempfile.TemporaryDirectory(prefix="tsumugi-chromium-") as profile:
        command = [
            str(CHROMIUM),
            *_FLAGS,
            f"--user-data-dir={profile}",
            f"--virtual-time-budget={budget_ms}",
            *action,
            url,
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    if done.returncode != 0:
        raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(url: str, budget_ms: int = 4_000) -> str:
    """The serialised DOM of ``url`` after ``budget_ms`` of virtual time."""
    return _run(url, ["--dump-dom"], budget_ms)


def screenshot(url: str, path: Path, budget_ms: int = 4_000) -> Path:
    """Save a PNG of ``url`` after ``budget_ms`` of virtual time."""
    _run(url, [f"--screenshot={path}"], budget_ms)
    return path


class _Collector(HTMLParser):
    """Collects elements by id and class: their text and whether they (or an ancestor) are hidden."""

    _VOID = frozenset({"input", "br", "img", "meta", "link", "hr", "col", "source", "wbr", "area", "base"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, dict[str, str], list[str], bool]] = []
        self.elements: list[tuple[dict[str, str], str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        hidden = "hidden" in attributes or bool(self.stack and self.stack[-1][3])
        if tag in self._VOID:
            self.elements.append((attributes, "", hidden))
        else:
            self.stack.append((tag, attributes, [], hidden))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            name, attributes, text, hidden = self.stack.pop()
            content = "".join(text)
            self.elements.append((attributes, content, hidden))
            if self.stack:
                self.stack[-1][2].append(content)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.stack:
            self.stack[-1][2].append(data)


class Dom:
    """Tiny queries over a dumped DOM: by id, by class; text content and visibility."""

    def __init__(self, html: str) -> None:
        collector = _Collector()
        collector.feed(html)
        self.html = html
        self._elements = collector.elements

    def by_id(self, element_id: str) -> tuple[str, bool] | None:
        """(text, hidden) of the element with this id, or None."""
        for attributes, text, hidden in self._elements:
            if attributes.get("id") == element_id:
                return text, hidden
        return None

    def by_class(self, name: str) -> list[tuple[dict[str, str], str]]:
        """(attributes, text) of every visible element carrying class ``name``, in document order."""
        # Siblings close in document order, so post-order collection keeps rows in order.
        return [
            (a, t) for a, t, hidden in self._elements if name in a.get("class", "").split() and not hidden
        ]
