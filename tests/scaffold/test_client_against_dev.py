"""Issue 16, acceptance 3: a plain Python script uses the blocking `TsumugiClient` against a real ``tsumugi dev``
(a new ``tsumugi init`` project), enqueues ``Hello``, waits, and gets ``"Hello, a!"`` back as a ``str``.

The script runs as its own process with this environment's Python, as any program would; the dev server is
waited for by its output lines (no sleeps), and the client itself waits by polling with backoff.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_acceptance_init_dev import DEADLINE_S, TOKEN, dev_server, tsumugi

from tests.support.dev_process import DevProcess

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent(
    """
    import os

    from tsumugi_client import PerformerRef, TsumugiClient

    HELLO: PerformerRef[dict[str, str], str] = PerformerRef("Hello").returning(str)

    with TsumugiClient(os.environ["TSUMUGI_URL"], token=os.environ["TSUMUGI_TOKEN"]) as client:
        job = client.enqueue(HELLO, {"name": "a"}, priority=5)
        result = job.result(timeout=30)
        again = client.enqueue("Hello", {"name": "b"}).result(timeout=30)
    print(job.id, type(result).__name__, repr(result), repr(again), sep="|")
    """
)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DevProcess]:
    root = tmp_path / "shop"
    made = tsumugi(tmp_path, "init", str(root))
    assert made.returncode == 0, made.stderr
    dev = dev_server(root)
    try:
        yield dev
    finally:
        assert dev.stop() == 0, "\n".join(dev.lines)


def test_a_plain_script_enqueues_hello_waits_and_gets_the_greeting_as_a_str(
    server: DevProcess, tmp_path: Path
) -> None:
    deadline = time.monotonic() + DEADLINE_S
    url = server.ready_url("shop-scheduler", deadline)
    script = tmp_path / "producer.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=DEADLINE_S,
        env={**os.environ, "TSUMUGI_URL": url, "TSUMUGI_TOKEN": TOKEN},
    )
    assert done.returncode == 0, done.stderr
    job_id, type_name, result, again = done.stdout.strip().split("|")
    assert job_id.startswith("Hello#0:")
    assert (type_name, result, again) == ("str", "'Hello, a!'", "'Hello, b!'")
    server.wait_for(rf"job {re.escape(job_id)} COMPLETED", deadline)
