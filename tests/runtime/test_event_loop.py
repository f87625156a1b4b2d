"""The event loop the local runtime runs on: uvloop's by default, asyncio's on request (ADR-0181)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import httpx
import pytest
import uvloop

from tests.support.dev_process import DevProcess
from tsumugi_dev.cli import main
from tsumugi_dev.event_loop import EVENT_LOOP_VARIABLE, loop_factory, run

PROBE = Path(__file__).parent / "fixtures" / "loop_probe" / "wrangler.toml"


async def _loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


def test_uvloop_runs_by_default() -> None:
    assert loop_factory({}) is uvloop.new_event_loop
    assert loop_factory({EVENT_LOOP_VARIABLE: ""}) is uvloop.new_event_loop
    assert run(_loop_module(), {}).startswith("uvloop")


def test_the_variable_chooses_asyncios_loop() -> None:
    assert loop_factory({EVENT_LOOP_VARIABLE: "asyncio"}) is None
    assert run(_loop_module(), {EVENT_LOOP_VARIABLE: "asyncio"}) == "asyncio.unix_events"


def test_without_uvloop_installed_asyncios_loop_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError
    assert loop_factory({}) is None
    assert run(_loop_module(), {}) == "asyncio.unix_events"


def test_an_unknown_loop_is_refused_naming_the_variable_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"^TSUMUGI_EVENT_LOOP: must be one of uvloop, asyncio, got 'trio'$"):
        loop_factory({EVENT_LOOP_VARIABLE: "trio"})


def test_tsumugi_dev_refuses_an_unknown_loop_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(EVENT_LOOP_VARIABLE, "Uvloop")
    with pytest.raises(SystemExit) as exited:
        main(["dev", str(PROBE), "--data-dir", str(tmp_path / "data"), "--port", "0"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "tsumugi dev: TSUMUGI_EVENT_LOOP: must be one of uvloop, asyncio, got 'Uvloop'" in err
    assert not (tmp_path / "data" / "runtime.sqlite").exists()  # no runtime was started


@pytest.mark.slow
@pytest.mark.parametrize(
    ("chosen", "module", "stop_signal"),
    [
        (None, "uvloop", signal.SIGINT),
        (None, "uvloop", signal.SIGTERM),
        ("asyncio", "asyncio.unix_events", signal.SIGINT),
    ],
)
def test_tsumugi_dev_serves_on_the_chosen_loop_and_stops_cleanly(
    tmp_path: Path, chosen: str | None, module: str, stop_signal: signal.Signals
) -> None:
    env = {k: v for k, v in os.environ.items() if k != EVENT_LOOP_VARIABLE}
    if chosen is not None:
        env[EVENT_LOOP_VARIABLE] = chosen
    dev = DevProcess(
        tmp_path, str(PROBE), "--data-dir", str(tmp_path / "data"), env=env, stop_signal=stop_signal
    )
    try:
        url = dev.ready_url("loop-probe")
        answer = httpx.get(url + "/", timeout=10).json()
    finally:
        code = dev.stop()
    assert answer == {"module": module, "name": "Loop" if module == "uvloop" else "_UnixSelectorEventLoop"}
    assert code == 0, dev.text()
