"""Each import package of tsumugi-dev imports on its own in a fresh interpreter (no import cycle).

The imitated ``workers`` package uses small modules of ``tsumugi_dev`` (``ffi``, ``invocation``), while
``tsumugi_dev.runtime`` imports ``workers``; ``tsumugi_dev`` therefore loads its public names lazily.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "statement",
    [
        "import workers",
        "import workers.rpc",
        "from workers import Response, WorkerEntrypoint, python_to_rpc",
        "import tsumugi_dev.ffi",
        "from tsumugi_dev import LocalRuntime, VirtualClock",
    ],
)
def test_imports_alone_in_a_fresh_interpreter(statement: str) -> None:
    done = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_an_unknown_name_is_an_attribute_error() -> None:
    import tsumugi_dev

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = tsumugi_dev.Nope  # pyright: ignore[reportAttributeAccessIssue]
