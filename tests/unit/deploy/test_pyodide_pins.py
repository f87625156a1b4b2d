"""Third-party pins against Pyodide 0.28's package set."""

from __future__ import annotations

from tsumugi_dev.pyodide_pins import pin_problems, pyodide_packages
from tsumugi_dev.vendoring import parse_requirement


def test_the_package_set_holds_the_versions_workers_run() -> None:
    # Facts from packages/tsumugi-dev/README.md#what-is-emulated-and-how (Pyodide 0.28 on Cloudflare).
    shipped = pyodide_packages()
    assert shipped["pydantic"] == "2.10.6"
    assert shipped["msgspec"] == "0.19.0"
    assert shipped["httpx"] == "0.28.1"
    assert len(shipped) > 300


def test_a_pin_other_than_pyodides_or_no_pin_is_a_problem() -> None:
    problems = pin_problems(
        parse_requirement(text)
        for text in ("msgspec==0.18.6", "pydantic", "httpx==0.28.1", "starlette==0.46.2")
    )
    assert problems == [
        "msgspec==0.18.6: Pyodide 0.28 ships msgspec 0.19.0, not 0.18.6",
        "pydantic: Pyodide 0.28 ships pydantic 2.10.6; pin it (pydantic==2.10.6)",
    ]
