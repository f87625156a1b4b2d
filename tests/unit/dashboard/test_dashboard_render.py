"""render_dashboard: configuration injection, caching, input checks, and a page that loads nothing external."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from tsumugi_scheduler.dashboard import SCRIPT_ORDER, clear_dashboard_cache, render_dashboard

_INJECTED = re.compile(r"<head><script>window\.__TSUMUGI__=(?P<config>\{.*?\})</script>")


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_dashboard_cache()
    yield
    clear_dashboard_cache()


def _config(html: str) -> dict[str, object]:
    match = _INJECTED.search(html)
    assert match is not None, "configuration script is not right after <head>"
    return json.loads(match["config"])


def test_injects_the_token_cookie_name_right_after_head():
    html = render_dashboard("my_cookie")

    assert html.startswith("<!doctype html>")
    assert _config(html) == {"tokenCookie": "my_cookie"}
    assert html.count("window.__TSUMUGI__=") == 1


def test_default_cookie_is_tsumugi_token():
    assert _config(render_dashboard()) == {"tokenCookie": "tsumugi_token"}


def test_no_cookie_injects_null_for_identity_provider_sign_in():
    assert _config(render_dashboard(None)) == {"tokenCookie": None}


def test_result_is_cached_per_cookie_name():
    first = render_dashboard("a")

    assert render_dashboard("a") is first
    assert render_dashboard("b") is not first
    clear_dashboard_cache()
    assert render_dashboard("a") is not first
    assert render_dashboard("a") == first


@pytest.mark.parametrize("name", ["", "has space", "semi;colon", 'quote"', "</script>", "é"])
def test_rejects_a_value_that_is_not_a_cookie_name(name: str):
    with pytest.raises(ValueError, match=r"^token_cookie must be a cookie name"):
        render_dashboard(name)


def test_style_and_every_script_are_inlined():
    html = render_dashboard()
    assets = resources.files("tsumugi_scheduler.dashboard").joinpath("assets")

    assert "/*tsumugi:style*/" not in html
    assert "/*tsumugi:script*/" not in html
    assert assets.joinpath("style.css").read_text(encoding="utf-8") in html
    for name in SCRIPT_ORDER:
        assert assets.joinpath("js", name).read_text(encoding="utf-8") in html


def test_script_order_lists_every_script_once():
    on_disk = {
        entry.name
        for entry in resources.files("tsumugi_scheduler.dashboard").joinpath("assets", "js").iterdir()
        if entry.name.endswith(".js")
    }

    assert sorted(SCRIPT_ORDER) == sorted(on_disk)
    assert len(set(SCRIPT_ORDER)) == len(SCRIPT_ORDER)
    assert SCRIPT_ORDER[0] == "base.js"  # defines what the others use
    assert SCRIPT_ORDER[-1] == "app.js"  # starts the app once everything is defined


def test_loads_no_external_resource():
    html = render_dashboard()

    assert not re.search(r"""\bsrc\s*=\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert not re.search(r"<link\b", html, re.IGNORECASE)  # no stylesheets, fonts or icons from anywhere
    assert not re.search(r"""@import|url\(\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert not re.search(r"<script\b[^>]*\bsrc\b", html, re.IGNORECASE)
    assert not re.search(r"""fetch\(\s*["'`]https?:""", html)


def test_inline_scripts_cannot_close_early():
    html = render_dashboard()
    scripts = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)

    assert len(scripts) == 2  # the injected configuration and the app
    assert html.count("<script") == 2
