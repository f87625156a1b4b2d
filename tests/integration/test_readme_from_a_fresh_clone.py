"""Issue 26, acceptance 3: every runnable README snippet runs as written, the way the README says to run it,
in a fresh clone of this repository.

The clone is ``git clone`` of this checkout into a temporary folder (at ``HEAD``, or at the commit ``git stash
create`` makes of uncommitted changes to tracked files, so an edited README is what runs); nothing of this
checkout's environment is reused: the clone gets its own ``.venv`` the way the README's commands make it.

The server block (``<!-- tour: server -->``: ``export TSUMUGI_TOKEN=...`` then ``bash scripts/dev.sh``) runs
as written with ``--port 0`` appended (``scripts/dev.sh`` passes its arguments to ``tsumugi dev``, as the
README says), so a busy 8787 cannot fail the test; the other blocks' ``http://127.0.0.1:8787`` becomes the
port it got. Every other runnable block (``<!-- tour -->`` and ``<!-- client -->``) runs in README order in
one ``bash -euo pipefail`` session in the clone's folder, as a reader's second terminal would: a shell block
as its text, a Python block saved as a file in that folder and run with ``uv run python <file>.py``, as the
README says. The blocks marked ``<!-- not run: ... -->`` say why not
(tests/unit/repo/test_readme_snippets_accounted.py checks each block carries one of the three marks).

Tests never reach the network: uv runs with ``UV_OFFLINE=1`` from its cache (which scripts/test.sh fills with
``uv sync``), with the interpreter running this test (``UV_PYTHON``), and the ``python3`` that
``scripts/dev.sh`` calls is the one on ``PATH`` outside this test's virtual environment (scripts/test.sh's,
which has uv). One dev server serves every block.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.dev_process import DevProcess

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
ORIGIN = "http://127.0.0.1:8787"
DEADLINE_S = 120.0
_BLOCK = re.compile(
    r"<!-- (?P<mark>tour(?:: (?P<role>\w+))?|client) -->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```", re.DOTALL
)

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Block:
    role: str  # "server" for the block that starts the system, else "run"
    lang: str
    code: str


def readme_blocks(text: str) -> list[Block]:
    """Every runnable block (``<!-- tour -->``, ``<!-- tour: server -->``, ``<!-- client -->``), in order."""
    return [Block(m["role"] or "run", m["lang"], m["code"]) for m in _BLOCK.finditer(text)]


def session_script(blocks: list[Block], origin: str) -> tuple[str, dict[str, str]]:
    """The second terminal's bash session: each shell block's text, and for each Python block a
    ``uv run python <file>`` of the file it is saved as; with the files to write (name -> text)."""
    lines: list[str] = []
    files: dict[str, str] = {}
    for number, block in enumerate(blocks):
        code = block.code.replace(ORIGIN, origin)
        if block.role == "server":
            continue
        if block.lang == "sh":
            lines.append(code)
        elif block.lang == "python":
            name = f"readme_snippet_{number}.py"
            files[name] = code
            lines.append(f"uv run python {name}")
        else:
            raise AssertionError(f"a runnable README block in {block.lang!r}, which this test cannot run")
    return "\n".join(lines) + "\n", files


def server_script(blocks: list[Block]) -> str:
    """The server block as written, its ``bash scripts/dev.sh`` given ``--port 0`` (and ``exec``, so a signal
    reaches the server); `DevProcess` passes ``dev --port 0`` as ``$1..$3``, of which ``$2..`` go on."""
    (server,) = [block.code for block in blocks if block.role == "server"]
    assert server.rstrip().endswith("\nbash scripts/dev.sh"), server
    head = server.rstrip().removesuffix("bash scripts/dev.sh")
    return head + 'exec bash scripts/dev.sh "${@:2}"\n'


def test_the_session_runs_python_blocks_the_way_the_readme_says() -> None:
    blocks = [
        Block("server", "sh", "export TSUMUGI_TOKEN=t\nbash scripts/dev.sh"),
        Block("run", "sh", f"curl {ORIGIN}/api"),
        Block("run", "python", f"print('{ORIGIN}')"),
    ]
    script, files = session_script(blocks, "http://127.0.0.1:5")
    assert script == "curl http://127.0.0.1:5/api\nuv run python readme_snippet_2.py\n"
    assert files == {"readme_snippet_2.py": "print('http://127.0.0.1:5')"}
    assert server_script(blocks) == 'export TSUMUGI_TOKEN=t\nexec bash scripts/dev.sh "${@:2}"\n'
    text = README.read_text(encoding="utf-8")
    assert "`uv run python hello.py`" in text
    assert "`uv run python <file>.py`" in text


def _git(*args: str, cwd: Path = REPO) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.strip()


def _outside_the_venv_path() -> str:
    """``PATH`` without this test's virtual environment (which ``uv run`` put first): the reader's shell's."""
    venv_bins = {Path(sys.prefix) / "bin", Path(sys.executable).parent}
    if virtual_env := os.environ.get("VIRTUAL_ENV"):
        venv_bins.add(Path(virtual_env) / "bin")
    kept = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and Path(p) not in venv_bins]
    return os.pathsep.join(kept)


def _environment() -> dict[str, str]:
    dropped = {"VIRTUAL_ENV", "PYTHONPATH", "UV_PROJECT_ENVIRONMENT", "TSUMUGI_TOKEN", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return {
        **env,
        "PATH": _outside_the_venv_path(),
        "UV_OFFLINE": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_PYTHON": str(base),
    }


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # `stash create` makes a commit without touching the checkout: it needs an author even where git has none.
    identity = ("-c", "user.name=readme-test", "-c", "user.email=readme-test@localhost")
    commit = _git(*identity, "stash", "create") or _git("rev-parse", "HEAD")
    folder = tmp_path_factory.mktemp("fresh") / "tsumugi"
    _git("clone", "--quiet", "--shared", "--no-checkout", str(REPO), str(folder), cwd=folder.parent)
    _git("checkout", "--quiet", "--detach", commit, cwd=folder)
    assert not (folder / ".venv").exists()
    assert not (folder / ".tsumugi").exists()
    return folder


@pytest.fixture(scope="module")
def server(clone: Path) -> Iterator[tuple[DevProcess, str]]:
    blocks = readme_blocks((clone / "README.md").read_text(encoding="utf-8"))
    env = _environment()
    found = subprocess.run(
        ["python3", "-m", "uv", "--version"], env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert found.returncode == 0, (
        "scripts/dev.sh runs `python3 -m uv`; the python3 on PATH outside the test's environment has no uv "
        f"(scripts/test.sh installs it there): {found.stderr}"
    )
    dev = DevProcess(
        clone, env=env, timeout_s=DEADLINE_S, command=("bash", "-c", server_script(blocks), "bash")
    )
    try:
        yield dev, dev.ready_url("tsumugi-scheduler", time.monotonic() + DEADLINE_S)
    finally:
        assert dev.stop() == 0, dev.text()


def test_every_runnable_readme_block_runs_as_written_in_a_fresh_clone(
    clone: Path, server: tuple[DevProcess, str]
) -> None:
    dev, url = server
    blocks = readme_blocks((clone / "README.md").read_text(encoding="utf-8"))
    assert {(b.role, b.lang) for b in blocks} == {("server", "sh"), ("run", "sh"), ("run", "python")}
    # The tour's performer class (run: it imports and defines), its hello.py, and the client section's three.
    assert sum(b.lang == "python" for b in blocks) == 5
    script, files = session_script(blocks, url)
    for name, text in files.items():
        (clone / name).write_text(text, encoding="utf-8")
    env = {k: v for k, v in _environment().items() if k != "TSUMUGI_TOKEN"}  # the tour exports its own
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S * 2,
        check=False,
    )
    assert done.returncode == 0, f"{script}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    out = done.stdout
    # What the tour and the client section say each step prints (curl's JSON ends without a newline).
    assert re.search(r"^Hello#0:\S+$", out, re.MULTILINE), out  # step 3's echo "$JOB_ID"
    assert '"field":"payload.name"' in out.replace(" ", ""), out  # step 3's refused payload
    assert re.search(r"Hello#0:\S+ Hello, Tsumugi!$", out, re.MULTILINE), out  # hello.py
    assert re.search(r"greetings:\S+$", out, re.MULTILINE), out  # step 6's echo "$RUN_ID"
    assert re.search(r"Hello#0:\S+ Hello, a!$", out, re.MULTILINE), out  # the client section's script
    assert re.search(r"^Hello, typed!$", out, re.MULTILINE), out  # its typed, asyncio twin
    assert re.search(r"^greetings:\S+ (RUNNING|COMPLETED)$", out, re.MULTILINE), out  # its runs and schedules
    assert "'hello-every-10-minutes'" in out, out
    assert '"delivered":' in out.replace(" ", ""), out  # step 7's event
    # The clone's own environment ran them: uv made its .venv, with this clone's packages in it.
    assert (clone / ".venv").is_dir()
    located = subprocess.run(
        ["uv", "run", "python", "-c", "import tsumugi_client; print(tsumugi_client.__file__)"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=DEADLINE_S,
    )
    assert Path(located.stdout.strip()).resolve().is_relative_to(clone.resolve()), located.stdout
    dev.wait_for(r"job Hello#0:\S+ COMPLETED")
