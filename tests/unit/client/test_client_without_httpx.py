"""Inside a Worker, tsumugi_client works without httpx, which a Worker's upload does not carry (ADR-0107).

Run in a fresh interpreter where importing httpx fails, as it would on Pyodide with no httpx in the upload.
"""

from __future__ import annotations

import subprocess
import sys

PROBE = r"""
import importlib.abc, sys

class NoHttpx(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "httpx":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoHttpx())
import tsumugi_client
from tsumugi_client import create_client

client = create_client(bindings={"MAIL": {"shards": 2}})
assert callable(client.start_run) and callable(client.create_schedule)
print("worker path: ok")
try:
    tsumugi_client.TsumugiClient
except ModuleNotFoundError as exc:
    print(f"http client: {exc}")
"""


def test_the_worker_client_imports_and_is_made_without_httpx_and_the_http_clients_need_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["worker path: ok", "http client: No module named 'httpx'"]
