"""The examples in the docstrings of the modules written for ids, sharding, cron and performers run."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

import tsumugi_core.cron
import tsumugi_core.ids
import tsumugi_core.sharding
import tsumugi_performer._errors
import tsumugi_performer._performer
import tsumugi_performer.testing

MODULES = [
    tsumugi_core.ids,
    tsumugi_core.sharding,
    tsumugi_core.cron,
    tsumugi_performer._errors,
    tsumugi_performer._performer,
    tsumugi_performer.testing,
]


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.__name__)
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
