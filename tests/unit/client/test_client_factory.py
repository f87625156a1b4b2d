"""create_client: the Worker client, its configuration errors checked once at creation."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from tsumugi_client import AsyncTsumugiClient, TsumugiClient, WorkerClient, create_client


def test_defaults_make_a_service_binding_client() -> None:
    assert isinstance(create_client(), WorkerClient)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"service": "not a name"}, "service must be an env binding name"),
        ({"on_enqueue": 3}, "on_enqueue must be callable"),
        (
            {"bindings": {"MAIL": {"shards": -1}}},
            r"bindings\['MAIL'\]\.shards must be an integer of at least 1",
        ),
    ],
)
def test_bad_settings_name_the_setting_and_the_rule(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_client(**kwargs)


def test_the_worker_client_has_no_http_mode() -> None:
    """HTTP is the HTTP pair's (ADR-0162): create_client takes no base_url, token or http_client."""
    with pytest.raises(TypeError):
        create_client(base_url="https://x")  # pyright: ignore[reportCallIssue]


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and name not in ("close", "aclose", "job")
    }


def test_the_three_clients_have_the_same_calls() -> None:
    """One set of calls: the async twin mirrors the blocking client, the Worker client adds ``env`` first."""
    blocking, awaited, worker = (
        _public_methods(c) for c in (TsumugiClient, AsyncTsumugiClient, WorkerClient)
    )
    assert blocking.keys() == awaited.keys() == worker.keys()
    for name, signature in blocking.items():
        assert list(awaited[name].parameters) == list(signature.parameters)
        answer = str(signature.return_annotation)
        assert str(awaited[name].return_annotation) == answer.replace("Job[", "AsyncJob["), name
        if name != "enqueue":  # the Worker's enqueue also takes the original's binding= / payload= keywords
            assert list(worker[name].parameters) == ["self", "env", *list(signature.parameters)[1:]], name
        if "Job" not in answer:  # the Worker client answers ids where the HTTP pair answers handles
            assert str(worker[name].return_annotation) == answer, name
        assert inspect.iscoroutinefunction(getattr(AsyncTsumugiClient, name))
        assert inspect.iscoroutinefunction(getattr(WorkerClient, name))
    assert {"start_run", "get_run", "create_schedule", "trigger_schedule", "send_event"} <= blocking.keys()
