"""Fixtures of the shape tests: the workerd record, made fresh once per session, and the committed one."""

from __future__ import annotations

from typing import Any

import pytest

from tests.shapes.shape_record import load_committed, record_now


@pytest.fixture(scope="session")
def fresh_record() -> dict[str, Any]:
    return record_now()


@pytest.fixture(scope="session")
def committed_record() -> dict[str, Any]:
    return load_committed()
