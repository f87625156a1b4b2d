"""Issue 11, acceptance 3: the README's five-minute tour runs as written, against a real ``tsumugi dev``.

The tour's blocks are found by their marker, an HTML comment right before the fenced block (invisible on the
rendered page): ``<!-- tour -->`` for a block to run, ``<!-- tour: server -->`` for the block that starts the
system. The test runs whatever those blocks say; the only change made to them is the scheduler's origin
(``http://127.0.0.1:8787`` becomes the free port this run got). The server block is checked to be the
``export TSUMUGI_TOKEN=...`` and ``bash scripts/dev.sh`` it is, and started as what ``scripts/dev.sh`` runs
(``tsumugi dev``, after installing, which the test environment already did) with that token, on a free port and
a fresh data folder. Shell blocks run in order in one ``bash -euo pipefail`` session, as a reader's second
terminal would; Python blocks run as scripts with the token the tour exported.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from dev_process import DevProcess

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
ORIGIN = "http://127.0.0.1:8787"
DEADLINE_S = 60.0
_BLOCK = re.compile(r"<!-- tour(?:: (?P<role>\w+))? -->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```", re.DOTALL)

pytestmark = pytest.mark.slow


def tour_blocks() -> list[tuple[str, str, str]]:
    """``(role, language, code)`` of each marked block, in README order."""
    return [
        (m["role"] or "run", m["lang"], m["code"])
        for m in _BLOCK.finditer(README.read_text(encoding="utf-8"))
    ]


def _server_token() -> str:
    (server,) = [code for role, _, code in tour_blocks() if role == "server"]
    lines = [line.split("#")[0].strip() for line in server.splitlines() if line.split("#")[0].strip()]
    assert lines[-1] == "bash scripts/dev.sh", server
    (token,) = [
        shlex.split(line)[1].split("=", 1)[1] for line in lines if line.startswith("export TSUMUGI_TOKEN=")
    ]
    return token


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The scheduler's origin of a running ``tsumugi dev`` started with the tour's token."""
    data = tmp_path_factory.mktemp("tour") / "data"
    env = {**os.environ, "TSUMUGI_TOKEN": _server_token()}
    server = DevProcess(REPO, "--data-dir", str(data), env=env, timeout_s=DEADLINE_S)
    try:
        yield server.ready_url("tsumugi-scheduler")
    finally:
        assert server.stop() == 0, server.text()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "TSUMUGI_TOKEN"}  # the tour exports its own
    # The tour's `python3` is whatever the reader has; here, this environment's (its packages installed).
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def test_the_tour_has_a_server_block_and_runnable_shell_and_python_blocks() -> None:
    kinds = [(role, lang) for role, lang, _ in tour_blocks()]
    assert ("server", "sh") in kinds
    assert ("run", "sh") in kinds
    assert ("run", "python") in kinds


def test_every_shell_block_of_the_tour_runs_as_written(dev: str) -> None:
    url = dev
    script = "\n".join(
        code.replace(ORIGIN, url) for role, lang, code in tour_blocks() if (role, lang) == ("run", "sh")
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stderr.lower(), done.stderr


def _uv() -> list[str]:
    """The README's ``uv``: on PATH as scripts/test.sh puts it, else this Python's ``-m uv``."""
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def test_every_python_block_of_the_tour_runs_as_written(dev: str) -> None:
    # As the README says (issue 26): saved in the repository's folder and run with `uv run python <file>.py`.
    url = dev
    blocks = [code for role, lang, code in tour_blocks() if (role, lang) == ("run", "python")]
    assert "`uv run python hello.py`" in README.read_text(encoding="utf-8")
    env = {**_env(), "TSUMUGI_TOKEN": _server_token()}  # as exported in the tour's terminal
    env.pop("VIRTUAL_ENV", None)
    for number, code in enumerate(blocks):
        script = REPO / f".readme-tour-{os.getpid()}-{number}.py"
        script.write_text(code.replace(ORIGIN, url), encoding="utf-8")
        try:
            done = subprocess.run(
                [*_uv(), "run", "--frozen", "python", script.name],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=DEADLINE_S,
                check=False,
            )
        finally:
            script.unlink()
        assert done.returncode == 0, f"block {number}:\n{code}\n{done.stdout}{done.stderr}"
