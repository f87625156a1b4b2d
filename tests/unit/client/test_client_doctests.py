"""The examples in the client's docstrings run and hold."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tsumugi_client",
    "tsumugi_core.enqueue_defaults",
    "tsumugi_client._errors",
    "tsumugi_client._factory",
    "tsumugi_client._job",
    "tsumugi_client._retry",
    "tsumugi_client._routing",
    "tsumugi_client._targets",
    "tsumugi_client._wire",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
