"""Errors caught from RPC calls, in the shapes Cloudflare delivers (ADR-0042): what the consumer records."""

from __future__ import annotations

import pytest
from jsemu.core import js_error
from pyodide.ffi import JsException

from tsumugi_dev.js_values import remote_js_error as remote_error
from tsumugi_scheduler.remote_errors import error_text, is_missing_method


def raised_across(exc: Exception) -> JsException:
    try:
        raise exc
    except Exception as caught:
        return remote_error(caught)


def test_a_python_error_is_recorded_as_its_last_line_then_the_traceback() -> None:
    text = error_text(raised_across(ValueError("performer Worker broke")))
    head, rest = text.split("\n", 1)
    assert head == "ValueError: performer Worker broke"
    assert rest.startswith("Traceback (most recent call last):")


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            js_error("DataCloneError", "Proxy could not be serialized"),
            "DataCloneError: Proxy could not be serialized",
        ),
        (RuntimeError("plain"), "RuntimeError: plain"),
    ],
)
def test_other_errors_are_name_and_message(error: Exception, text: str) -> None:
    assert error_text(error) == text


@pytest.mark.parametrize(
    ("error", "missing"),
    [
        (js_error("TypeError", "Method run_attempt does not exist"), True),  # a Python target
        (
            js_error("TypeError", 'The RPC receiver does not implement the method "run_attempt".'),
            True,
        ),  # JS
        (js_error("TypeError", "Method other does not exist"), False),
        (raised_across(TypeError("Method run_attempt does not exist")), False),  # the target's own error
    ],
)
def test_a_missing_method_is_recognised_only_from_workerd(error: Exception, missing: bool) -> None:
    assert is_missing_method(error, "run_attempt") is missing
