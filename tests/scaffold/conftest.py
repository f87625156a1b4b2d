"""Fixtures for the scaffolding commands: a freshly init'ed project per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tsumugi_dev.scaffold import InitResult, init_project


@pytest.fixture
def project(tmp_path: Path) -> InitResult:
    return init_project(tmp_path / "my-app")
