"""Fakes of the scheduler's RPC entrypoint and of a Service Binding, shared by the client's RPC tests."""

from __future__ import annotations

import copy
from typing import Any

PLAIN_TYPES = (str, int, float, bool, type(None))


class JsDict(dict[str, Any]):
    """What Python Workers hand back for a plain JS object: a dict that also allows attribute access."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class RemoteError(Exception):
    """An exception as the caller of a binding sees it: only the type name and message cross."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")


def assert_plain(value: Any, where: str = "value") -> None:
    """Only builtins a Service Binding can copy: exact dict/list/str/int/float/bool/None, string keys."""
    if type(value) is dict:
        for key, element in value.items():
            assert type(key) is str, f"{where}: key {key!r} is not a str"
            assert_plain(element, f"{where}[{key!r}]")
    elif type(value) is list:
        for index, element in enumerate(value):
            assert_plain(element, f"{where}[{index}]")
    else:
        assert type(value) in PLAIN_TYPES, f"{where}: {type(value).__name__} cannot cross a binding"


def to_js(value: Any) -> Any:
    """What the caller gets back across RPC: dicts become JsDict, lists stay lists (copied)."""
    if isinstance(value, dict):
        return JsDict({key: to_js(element) for key, element in value.items()})
    if isinstance(value, list):
        return [to_js(element) for element in value]
    return value


def job_detail(job_id: str = "MAIL#0:abc", **overrides: Any) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "id": job_id,
        "binding": "MAIL",
        "state": "FAILED",
        "priority": 0,
        "attempts": 3,
        "max_attempts": 3,
        "concurrency_key": None,
        "unique_key": None,
        "guarantee": "at-least-once",
        "created_at": 1000,
        "updated_at": 2000,
        "dispatched_at": 1500,
        "run_after": 1000,
        "progress": 1,
        "payload": '{"to":"a"}',
        "result": None,
        "retryable": True,
        "attempts_log": [
            {"attempt": 3, "state": "FAILED", "started_at": 1500, "finished_at": 2000, "error": "boom"}
        ],
    }
    detail.update(overrides)
    return detail


class FakeScheduler:
    """Records every RPC call (deep-copied, after checking it is plain) and answers like the entrypoint."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.answers: dict[str, Any] = {}
        self.raises: dict[str, BaseException] = {}
        self._next = 0
        self.issued: dict[str, dict[str, Any]] = {}

    def _record(self, method: str, *args: Any) -> Any:
        for index, arg in enumerate(args):
            assert_plain(arg, f"{method} args[{index}]")
        self.calls.append((method, copy.deepcopy(args)))
        if method in self.raises:
            raise self.raises[method]
        return self.answers.get(method)

    async def enqueue_many(self, items: list[dict[str, Any]]) -> list[str]:
        answer = self._record("enqueue_many", items)
        if answer is not None:
            return to_js(answer)
        ids = []
        for item in items:
            self._next += 1
            job_id = item.get("id") or f"{item['binding']}#{item.get('shard', 0)}:j{self._next}"
            self.issued[job_id] = item
            ids.append(job_id)
        return ids

    async def get(self, job_id: str) -> Any:
        return to_js(self._record("get", job_id))

    async def cancel(self, job_id: str) -> Any:
        return to_js(self._record("cancel", job_id) or {"ok": True, "requested": False})

    async def retry(self, job_id: str) -> Any:
        return to_js(self._record("retry", job_id) or {"ok": True})

    async def reschedule(self, job_id: str, body: dict[str, Any]) -> Any:
        return to_js(self._record("reschedule", job_id, body) or {"ok": True})


class RuntimeBinding:
    """Service Binding semantics: arguments checked and copied, answers as JsDict, exceptions as RemoteError."""

    def __init__(self, target: object) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)

        async def call(*args: Any) -> Any:
            for index, arg in enumerate(args):
                assert_plain(arg, f"args[{index}]")
            try:
                answer = await method(*copy.deepcopy(args))
            except Exception as exc:
                raise RemoteError(exc) from None
            return to_js(answer)

        return call


def sent_items(scheduler: FakeScheduler) -> list[list[dict[str, Any]]]:
    """The item lists of every enqueue_many call, in call order."""
    return [args[0] for method, args in scheduler.calls if method == "enqueue_many"]
