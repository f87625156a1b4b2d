# pyright: reportArgumentType=false, reportGeneralTypeIssues=false, reportAttributeAccessIssue=false, reportCallIssue=false
# (The SDK's annotations are narrower than its behaviour: str methods, awaitable wrapper results.)
"""The HTTP front (ASGI), the ``tsumugi dev`` command's refusals and config loading."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from pyodide.ffi import JsException
from workers import Request, Response

from tsumugi_dev import cli
from tsumugi_dev.cli import main
from tsumugi_dev.config import ConfigError, load_config
from tsumugi_dev.http_server import asgi_app
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.runtime import LocalRuntime


async def test_asgi_app_serves_the_workers_fetch(runtime: LocalRuntime) -> None:
    transport = httpx.ASGITransport(app=asgi_app(runtime, "conformance", test_scheduled=True))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787") as client:
        hello = await client.get("/hello")
        echo = await client.post("/echo", json={"a": [1, 2]}, headers={"x-test": "yes"})
        missing = await client.get("/nowhere")
        scheduled = await client.get("/cdn-cgi/handler/scheduled", params={"cron": "*/5 * * * *"})
    assert (hello.status_code, hello.text, hello.headers["x-worker"]) == (
        200,
        "hello from conformance",
        "conformance",
    )
    assert echo.json() == {"method": "POST", "body": {"a": [1, 2]}, "h": "yes"}
    assert missing.status_code == 404
    assert scheduled.text == "ok"


def test_dev_without_configs_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["dev"])
    assert exited.value.code == 2
    assert "no wrangler config given and none found" in capsys.readouterr().err


def test_dev_with_a_bad_config_names_the_field(tmp_path: Path, capsys) -> None:
    config = tmp_path / "wrangler.jsonc"
    config.write_text(
        '{"name": "w", "main": "entry.py", "queues": {"consumers": [{"queue": "q", "max_batch_size": 500}]}}'
    )
    with pytest.raises(SystemExit) as exited:
        main(["dev", str(config)])
    assert exited.value.code == 2
    assert "queues.consumers[0].max_batch_size must be between 1 and 100 (got 500)" in capsys.readouterr().err


def test_dev_on_a_busy_port_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(cli, "configure_logging", lambda stream, **_: None)  # keep pytest's logging as it is
    config = Path(__file__).parent / "fixtures" / "fidelity" / "wrangler.jsonc"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exited:
            main(["dev", str(config), "--data-dir", str(tmp_path / "data"), "--port", str(port)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"tsumugi dev: port {port} is in use" in err
    assert "Traceback" not in err


def test_jsonc_comments_and_trailing_commas() -> None:
    text = '{\n // a comment\n "a": "http://x//y", /* block */ "b": [1, 2,],\n}'
    assert loads_jsonc(text) == {"a": "http://x//y", "b": [1, 2]}


def test_config_errors_name_the_field_and_rule(tmp_path: Path) -> None:
    path = tmp_path / "wrangler.toml"
    path.write_text(
        'name = "w"\nmain = "entry.py"\n[[durable_objects.bindings]]\nname = "NS"\nclass_name = "Shard"\n'
    )
    with pytest.raises(ConfigError, match="class Shard must be listed in a migration's new_sqlite_classes"):
        load_config(path)
    path.write_text('main = "entry.py"\n')
    with pytest.raises(ConfigError, match="name is required"):
        load_config(path)
    path.write_text('name = "w"\nmain = "entry.py"\n[[services]]\nbinding = 3\nservice = "x"\n')
    with pytest.raises(ConfigError, match=r"services: Expected `str`, got `int` - at `\$\[0\].binding`"):
        load_config(path)


async def test_sdk_request_and_response_shapes() -> None:
    request = Request("http://x/p?q=1", method="post", headers={"Content-Type": "text/plain"}, body="hi")
    assert (request.method.value, request.headers["content-type"], await request.text()) == (
        "POST",
        "text/plain",
        "hi",
    )
    with pytest.raises(OSError, match="Body already used"):
        await request.text()
    response = Response.json({"a": 1})
    assert response.headers["content-type"] == "application/json"
    assert await response.json() == {"a": 1}
    assert Response.redirect("http://y").headers["location"] == "http://y"
    with pytest.raises(TypeError, match="Unsupported type in Response: dict"):
        Response({"a": 1})  # type: ignore[arg-type]
    with pytest.raises(JsException, match="TypeError: Invalid HTTP method string: FETCH"):
        Request("http://x", method="FETCH")


async def test_methods_workerd_parses_reach_the_worker_and_others_are_501(runtime: LocalRuntime) -> None:
    # kj's HTTP parser knows QUERY, PURGE, PROPFIND... (KJ_HTTP_FOR_EACH_METHOD) and answers any other
    # method itself with 501 "Unrecognized request method." before a Worker runs.
    transport = httpx.ASGITransport(app=asgi_app(runtime, "conformance", test_scheduled=True))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787") as client:
        query = await client.request("QUERY", "/hello")
        unknown = await client.request("FOO", "/hello")
    assert (query.status_code, query.text) == (200, "hello from conformance")
    assert (unknown.status_code, unknown.text) == (501, "Unrecognized request method.")


def test_the_sdk_request_keeps_an_unusual_method_as_text_on_its_js_object() -> None:
    request = Request("http://x", method="QUERY")
    assert request.js_object.method == "QUERY"
    with pytest.raises(KeyError):
        _ = request.method  # the SDK's HTTPMethod[...] has no QUERY


def test_connections_the_dev_server_accepts_send_small_writes_at_once() -> None:
    # uvicorn writes a response's head and body separately; with Nagle's algorithm the body waited for the
    # client's delayed ACK, ~40 ms on every keep-alive request (issue 16's client bench found it).
    from tsumugi_dev.http_server import _listening_socket  # pyright: ignore[reportPrivateUsage]

    with _listening_socket("127.0.0.1", 0) as listening:
        listening.listen(1)
        with socket.create_connection(listening.getsockname()) as _client:
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


BROKEN_SCHEDULE = """\
from workers import WorkerEntrypoint

from tsumugi_scheduler.definition import define_tsumugi

TSUMUGI = define_tsumugi(performers=["Hello"], schedules={
    "nightly": {"binding": "Hello", "payload": {}, "every_ms": 10},
})


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return None
"""


def _broken_worker(folder: Path) -> Path:
    (folder / "src").mkdir()
    (folder / "src" / "entry.py").write_text(BROKEN_SCHEDULE)
    config = folder / "wrangler.toml"
    config.write_text(
        'name = "broken"\nmain = "src/entry.py"\ncompatibility_date = "2025-11-01"\n'
        'compatibility_flags = ["python_workers"]\n'
    )
    return config


def test_a_worker_that_fails_to_start_says_why_in_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 26 item 7: a schedule typo's clear message sat under a 40-line traceback.
    monkeypatch.setattr(cli, "configure_logging", lambda stream, **_: None)  # keep pytest's logging as it is
    monkeypatch.chdir(tmp_path)
    config = _broken_worker(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["dev", str(config), "--port", "0", "--data-dir", str(tmp_path / "data")])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    [line] = err.splitlines()
    assert line.startswith("tsumugi dev: a Worker failed to start: ")
    assert "schedules.nightly.every_ms must be an integer of at least 1000, got 10" in line
    assert "(at src/entry.py:5)" in line
    assert line.endswith("(--verbose shows the traceback)")


# -- what a third review proved to end in a traceback, or to load and break later ---------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b'{"name": "w", "main": "entry.py", "vars": {"A": "\xff"}}',
            "must be UTF-8 text (invalid byte at offset",
        ),
        (
            b'{"name": "w", "main": "entry.py", "vars": {"A": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
            "nested too deeply",
        ),
        (
            b'{"name": "w", "main": "entry.py", "queues": {"producers": [{"binding": "Q", "queue": "q", "delivery_delay": -5}]}}',
            "queues.producers[0].delivery_delay must be between 0 and 43200 (got -5)",
        ),
        (
            b'{"name": "w", "main": "entry.py", "queues": {"consumers": [{"queue": "q", "max_concurrency": -1}]}}',
            "queues.consumers[0].max_concurrency must be between 1 and 250 (got -1)",
        ),
        (
            b'{"name": "w", "main": "entry.py", "services": [{"binding": "DB", "service": "x"}],'
            b' "d1_databases": [{"binding": "DB", "database_name": "d"}]}',
            "binding DB is given 2 times (in d1_databases, services); binding names must be unique",
        ),
        (
            b'{"name": "w", "main": "entry.py", "services": [{"binding": "P", "service": "x"},'
            b' {"binding": "P", "service": "y"}]}',
            "binding P is given 2 times (in services, services)",
        ),
        (
            b'{"name": "w", "main": "entry.py", "queues": {"producers": [{"binding": "", "queue": "q"}]}}',
            "queues.producers: a binding name must be a non-empty string",
        ),
    ],
    ids=[
        "not-utf8",
        "deep",
        "delivery-delay",
        "max-concurrency",
        "one-name-two-kinds",
        "one-name-twice",
        "empty",
    ],
)
def test_a_config_that_broke_later_or_raised_is_refused_naming_the_rule(
    tmp_path: Path, text: bytes, message: str
) -> None:
    path = tmp_path / "wrangler.jsonc"
    path.write_bytes(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)


def test_a_dev_vars_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "wrangler.jsonc").write_text('{"name": "w", "main": "entry.py"}')
    (tmp_path / ".dev.vars").write_bytes(b"TOKEN=\xff\n")
    with pytest.raises(ConfigError, match=r"\.dev\.vars: must be UTF-8 text"):
        load_config(tmp_path / "wrangler.jsonc")


@pytest.mark.parametrize("port", ["70000", "-5", "8x"])
def test_a_port_that_is_no_tcp_port_is_a_usage_error(tmp_path: Path, capsys, port: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["dev", "--data-dir", str(tmp_path / "data"), f"--port={port}"])
    assert exited.value.code == 2
    assert "argument --port: must be a port from 0 to 65535" in capsys.readouterr().err


def test_a_first_port_that_leaves_no_room_for_every_worker_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr(cli, "configure_logging", lambda stream, **_: None)
    fixtures = Path(__file__).parent / "fixtures"
    configs = [str(fixtures / name / "wrangler.jsonc") for name in ("fidelity", "limits")]
    with pytest.raises(SystemExit) as exited:
        main(["dev", *configs, "--data-dir", str(tmp_path / "data"), "--port", "65535"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--port 65535 leaves no port for 2 Workers (the last would be 65536, past 65535)" in err


def test_a_data_dir_that_is_a_file_is_a_usage_error_and_the_file_is_kept(tmp_path: Path, capsys) -> None:
    taken = tmp_path / "afile"
    taken.write_text("mine")
    with pytest.raises(SystemExit) as exited:
        main(["dev", "--data-dir", str(taken)])
    assert exited.value.code == 2
    assert f"--data-dir {taken} exists and is not a folder" in capsys.readouterr().err
    assert taken.read_text() == "mine"
