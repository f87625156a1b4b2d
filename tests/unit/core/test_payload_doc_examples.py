"""The docstring examples of the payload-checking modules run as written."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from tsumugi_core import json_path, json_schema, portable
from tsumugi_scheduler.api import json_body, spelling


@pytest.mark.parametrize("module", [json_path, json_schema, portable, json_body, spelling])
def test_examples_hold(module: ModuleType) -> None:
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert (failed, attempted > 0) == (0, True)
