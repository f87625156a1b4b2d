"""The ``workers`` module every Worker imports is Cloudflare's SDK, and everything under it imports alone.

The SDK (``workers-runtime-sdk``, pinned) runs over the emulated ``js`` / ``pyodide`` modules of tsumugi-dev;
each imports on its own in a fresh interpreter (no import cycle, nothing that needs the runtime loaded first).
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    "statement",
    [
        "import workers",
        "import workers.rpc",
        "from workers import Response, WorkerEntrypoint, python_to_rpc",
        "from workers import asgi",
        "import js; from js import Object, Response",
        "from pyodide.ffi import JsProxy, create_proxy, jsnull, to_js",
        "import _pyodide_entrypoint_helper, _cloudflare_compat_flags",
        "from tsumugi_dev import LocalRuntime, VirtualClock",
    ],
)
def test_imports_alone_in_a_fresh_interpreter(statement: str) -> None:
    done = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_workers_is_the_installed_cloudflare_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import workers; print(workers.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = Path(done.stdout.strip()).resolve()
    distribution = importlib.metadata.distribution("workers-runtime-sdk")
    files = {Path(str(distribution.locate_file(f))).resolve() for f in distribution.files or []}
    assert printed in files
    assert distribution.version == "1.9.5"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import tsumugi_dev

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = tsumugi_dev.Nope  # pyright: ignore[reportAttributeAccessIssue]
