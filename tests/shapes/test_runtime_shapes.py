"""The local runtime's JS-side objects against the workerd record, case by case (ADR-0105).

`runtime_record.make_runtime_record` runs the recorder's operations on the runtime's raw JS objects (once per
module) and describes the results as ``recorder/describe.js`` does; each case of ``workerd-shapes.json`` must
come out equal. What the runtime does not imitate is listed in `NOT_EMULATED` by path, with the reason; a
second test keeps the list honest: each listed path must still differ (so a fixed difference is unlisted).
Prototype members are compared as sets (their order is workerd's declaration order, which no caller sees).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.shapes.runtime_record import make_runtime_record
from tests.shapes.shape_record import differences, load_committed

RECORD = load_committed()

# Sections whose entries are compared one by one; in the grouped ones, one level further down.
SECTIONS = (
    "durable_object_sql",
    "durable_object_context",
    "alarms",
    "d1",
    "queue_producer",
    "service_binding_rpc",
    "durable_object_stub_rpc",
    "analytics_engine",
    "handlers",
    "alarm_handler",
)
GROUPED = {
    "durable_object_sql": ("cursors", "counters", "transactionSync"),
    "service_binding_rpc": ("calls", "echo", "argument_not_cloneable"),
    "analytics_engine": ("cases",),
}

_COUNTERS = (
    "workerd counts rows with libSQL's statement counters (LIBSQL_STMTSTATUS_ROWS_READ/WRITTEN: rows visited, "
    "index entries and trigger writes); stock SQLite has none, so the runtime counts rows returned and changed"
)
OFFSET = re.compile(r" at offset \d+(?=: SQLITE_)")
"""workerd appends ``sqlite3_error_offset()`` to an SQL error; Python's sqlite3 module does not expose it, so the
record's messages are compared without it (`test_the_record_still_names_offsets` keeps this needed)."""
_PAGES = "the file's page count follows the SQLite build and its page use, which the runtime's stock SQLite does not share"
_MINIFLARE_D1 = (
    "the record's D1 backend is miniflare's (on Durable Object SQL, binding every number as a double); "
    "Cloudflare's D1 service is not recorded, so the runtime keeps SQLite's own types"
)
_STRICTER = "the runtime refuses what workerd accepts here (stricter on purpose: a caller bug either way)"

NOT_EMULATED: dict[str, str] = {
    **{
        f"$.durable_object_sql.counters.{case}": _COUNTERS
        for case in (
            "create_table",
            "delete_one",
            "insert_counted_before_reading",
            "insert_with_index_and_trigger",
            "insert_with_one_index",
            "returning",
            "select_count",
            "select_read_lazily",
            "select_scan_filter",
            "update_indexed_column",
            "update_none",
            "update_one",
            "update_unindexed_column",
            "upsert",
        )
    },
    "$.durable_object_sql.cursors.cursor_before_reading.getters.rowsRead": _COUNTERS,
    "$.durable_object_sql.cursors.exec_returns_cursor_for_ddl.getters.rowsRead": _COUNTERS,
    "$.durable_object_sql.cursors.exec_returns_cursor_for_ddl.getters.rowsWritten": _COUNTERS,
    "$.durable_object_sql.cursors.multiple_statements_counts.rowsRead": _COUNTERS,
    "$.durable_object_sql.databaseSize": _PAGES,
    "$.durable_object_sql.sql.getters.databaseSize": _PAGES,
    "$.durable_object_sql.storage.properties.sql.getters.databaseSize": _PAGES,
    "$.durable_object_context.ctx.properties.storage.properties.sql.getters.databaseSize": _PAGES,
    "$.d1.bind.integer.returns.properties.t": _MINIFLARE_D1,
    "$.d1.bind.true.returns.properties.t": _MINIFLARE_D1,
    "$.d1.bind.false.returns.properties.t": _MINIFLARE_D1,
    "$.d1.bind.array": _STRICTER + " (d1-api.ts passes an Array on; miniflare's backend stores it as a BLOB)",
    "$.d1.multiple_statements_in_prepare": _STRICTER
    + " (one statement per prepare, as D1's documentation asks)",
    "$.queue_producer.send_cycle.throws.message": "V8 adds two lines locating the cycle; the first line is equal",
    "$.handlers.queue.object-handlers.first.batch.properties.messages.items[14].properties.body": (
        "a v8 body keeps its JS type on workerd; the runtime stores every body as JSON (ADR-0044)"
    ),
    "$.handlers.queue.class-handlers.first.this_ctx.properties.exports": "ctx.exports names the loopback stubs",
    "$.handlers.queue.class-handlers.second.this_ctx.properties.exports": "ctx.exports names the loopback stubs",
    "$.handlers.scheduled.class-handlers.handler.this_ctx.properties.exports": "ctx.exports names the loopback stubs",
    "$.durable_object_context.ctx.properties.exports": "ctx.exports names the loopback stubs",
    "$.durable_object_stub_rpc.pending_call": (
        "an RPC call answers a Promise here; workerd's RpcPromise is also a callable proxy for pipelining"
    ),
    "$.service_binding_rpc.pending_call": (
        "an RPC call answers a Promise here; workerd's RpcPromise is also a callable proxy for pipelining"
    ),
    "$.service_binding_rpc.calls.rpcTarget": "RpcTarget is not emulated (no Python callee returns one)",
    "$.service_binding_rpc.getter_property": "RPC property access answers a method stub here, not the value",
    "$.service_binding_rpc.missing_property": "RPC property access answers a method stub here, not the value",
    **{
        f"$.analytics_engine.cases.{case}": _STRICTER
        + " (workerd coerces with ToNumber/ToString, ignores unknown fields)"
        for case in ("doubles_coerced", "doubles_nan", "blob_number", "unknown_field")
    },
}
"""Path prefix (as `differences` prints it) -> why the runtime does not do what workerd does there."""

MISSING_MEMBERS: dict[str, dict[str, str]] = {
    "DurableObjectStorage": dict.fromkeys(
        (
            "get",
            "list",
            "put",
            "delete",
            "transaction",
            "getCurrentBookmark",
            "getBookmarkForTime",
            "onNextSessionRestoreBookmark",
        ),
        "the KV API and point-in-time recovery: Tsumugi keeps its state in SQL only",
    ),
    "SqlStorage": dict.fromkeys(("Cursor", "Statement"), "constructors on the prototype no caller uses"),
    "DurableObjectState": dict.fromkeys(
        (
            "acceptWebSocket",
            "getWebSockets",
            "setWebSocketAutoResponse",
            "getWebSocketAutoResponse",
            "getWebSocketAutoResponseTimestamp",
            "setHibernatableWebSocketEventTimeout",
            "getHibernatableWebSocketEventTimeout",
            "getTags",
        ),
        "WebSocket hibernation: no Tsumugi Worker serves WebSockets",
    ),
    "D1Database": {"dump": "D1's export API, not used", "withSession": "read replication sessions, not used"},
    "WorkerQueue": {"metrics": "queue backlog metrics, not used"},
}
"""Prototype members workerd has and the runtime leaves out, by constructor: dropped from the record's side."""

EXTRA_MEMBERS: dict[str, dict[str, str]] = {
    "AnalyticsEngine": {
        "query": "the local read path /api/metrics uses under tsumugi dev (never on Cloudflare)"
    },
}
"""Prototype members only the runtime has, by constructor: dropped from the runtime's side."""

MISSING_KEYS: dict[str, dict[str, str]] = {
    "DurableObjectStorage": {"kv": "the synchronous KV API, not used"},
    "DurableObjectState": {
        "facets": "Durable Object facets, not used",
        "container": "containers, not used",
    },
    "D1Database": dict.fromkeys(
        ("alwaysPrimarySession", "fetcher"), "d1-api.ts's own fields, which no caller reads"
    ),
    "D1PreparedStatement": dict.fromkeys(("dbSession", "statement", "params"), "d1-api.ts's own fields"),
}
"""Own properties workerd's objects carry and the runtime's do not, by constructor: dropped from the record's side."""

D1_META_VALUES: dict[str, str] = {
    "served_by": "names the local backend (miniflare.db there, tsumugi-dev here)",
    "size_after": _PAGES,
    "rows_read": _COUNTERS,
    "rows_written": _COUNTERS,
}
"""D1 ``meta`` fields compared by type only (their keys, order and types are compared)."""


_PYTHON_CALLEE = "the callee is a Python Worker here"
_NO_SUCH_VALUE = "Python code has no way to make this JS value (a Symbol, a WeakMap)"

BY_DESIGN: dict[str, str] = {
    "$.handlers.scheduled.object-handlers": "Python Workers export a Default class: no default-export object",
    "$.handlers.scheduled.class-handlers.result": "the runtime runs the handler itself; no Fetcher.scheduled() result",
    "$.handlers.queue.class-handlers.first.this_env_keys": "the fixtures bind other names than the recorder",
    "$.handlers.queue.class-handlers.second.this_env_keys": "the fixtures bind other names than the recorder",
    "$.handlers.scheduled.class-handlers.handler.this_env_keys": "the fixtures bind other names than the recorder",
    **{
        f"$.handlers.queue.object-handlers.{delivery}.{part}": (
            "Python Workers export a Default class: its arguments are compared with the class record"
        )
        for delivery in ("first", "second")
        for part in ("arguments_length", "env", "ctx")
    },
    "$.service_binding_rpc.calls.undefinedValue": _PYTHON_CALLEE + ": the SDK sends None as null",
    "$.service_binding_rpc.calls.noReturn": _PYTHON_CALLEE + ": the SDK sends None as null",
    "$.durable_object_stub_rpc.undefined_value": _PYTHON_CALLEE + ": the SDK sends None as null",
    "$.service_binding_rpc.missing_method.throws.message": _PYTHON_CALLEE
    + " (workerd's Python helper's text)",
    "$.durable_object_stub_rpc.missing_method.throws.message": _PYTHON_CALLEE
    + " (workerd's Python helper's text)",
    "$.service_binding_rpc.calls.throwsCustom.throws": _PYTHON_CALLEE + ": no JS subclass sets an own name",
    "$.service_binding_rpc.calls.symbol": _NO_SUCH_VALUE,
    "$.service_binding_rpc.argument_not_cloneable.symbol": _NO_SUCH_VALUE,
    "$.service_binding_rpc.argument_not_cloneable.weakmap": _NO_SUCH_VALUE,
    "$.queue_producer.send_symbol": _NO_SUCH_VALUE,
    **{
        f"$.service_binding_rpc.echo.{case}": (
            _PYTHON_CALLEE
            + ": it sees its arguments after the SDK's python_from_rpc and answers their count only"
        )
        for case in ("primitives", "containers", "no_arguments", "trailing_undefined")
    },
}
"""Paths that differ because the two sides are set up differently, not because the runtime imitates badly."""


def _cases() -> Iterator[str]:
    for section in SECTIONS:
        groups = GROUPED.get(section, ())
        for key, value in RECORD[section].items():
            if key in groups:
                yield from (f"{section}.{key}.{inner}" for inner in value)
            else:
                yield f"{section}.{key}"


CASES = list(_cases())


def _dig(tree: Any, case: str) -> Any:
    for part in case.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return {"missing from the runtime's record": True}
        tree = tree[part]
    return tree


def _normalised(value: Any, *, side: str) -> Any:
    """Prototype members as a sorted list; the members and keys listed above dropped from their side; D1
    ``meta`` values listed above reduced to their type."""
    if isinstance(value, list):
        return [_normalised(v, side=side) for v in value]
    if isinstance(value, str) and side == "record":
        return OFFSET.sub("", value)
    if not isinstance(value, dict):
        return value
    constructor = str(value.get("constructor"))
    dropped_members = (MISSING_MEMBERS if side == "record" else EXTRA_MEMBERS).get(constructor, {})
    dropped_keys = MISSING_KEYS.get(constructor, {}) if side == "record" else {}
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "prototype" and isinstance(item, list):
            out[key] = sorted(tuple(m) for m in item if m[0] not in dropped_members)
        elif key == "keys" and isinstance(item, list):
            out[key] = [k for k in item if k not in dropped_keys]
        elif key in ("properties", "getters") and isinstance(item, dict):
            out[key] = {
                k: _normalised(
                    _type_only(k, v)
                    if value.get("keys") is not None and k in D1_META_VALUES and _is_meta(value)
                    else v,
                    side=side,
                )
                for k, v in item.items()
                if k not in dropped_keys
            }
        else:
            out[key] = _normalised(item, side=side)
    return out


def _is_meta(description: dict[str, Any]) -> bool:
    return {"served_by", "duration", "changes"} <= set(description.get("keys", []))


def _type_only(_key: str, description: Any) -> Any:
    return (
        {k: v for k, v in description.items() if k != "value"}
        if isinstance(description, dict)
        else description
    )


def _found(case: str, runtime_record: dict[str, Any]) -> list[str]:
    want = _normalised(_dig(RECORD, case), side="record")
    got = _normalised(_dig(runtime_record, case), side="runtime")
    return list(differences(want, got, f"$.{case}"))


NAMED_PARAMETERS = ("durable_object_sql.cursors.bind_named", "d1.bind_named")
"""``SELECT :x`` bound by position: SQLite (and workerd) number the name; Python's sqlite3 warns from 3.13 (a
DeprecationWarning, an error under this suite's warning filter) and refuses from 3.14. Tsumugi binds ``?`` only."""


def _excused(line: str) -> bool:
    named = tuple(f"$.{case}" for case in NAMED_PARAMETERS)
    return any(line.startswith(prefix) for prefix in (*NOT_EMULATED, *BY_DESIGN, *named))


@pytest.fixture(scope="module")
def runtime_record(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return asyncio.run(make_runtime_record(tmp_path_factory.mktemp("shapes")))


@pytest.mark.parametrize("case", CASES)
def test_the_runtime_returns_what_workerd_returns(case: str, runtime_record: dict[str, Any]) -> None:
    found = [line for line in _found(case, runtime_record) if not _excused(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("prefix", sorted(NOT_EMULATED))
def test_each_listed_difference_is_still_there(prefix: str, runtime_record: dict[str, Any]) -> None:
    case = next(c for c in CASES if prefix.startswith(f"$.{c}.") or prefix == f"$.{c}")
    assert any(line.startswith(prefix) for line in _found(case, runtime_record)), (
        f"{prefix} now matches workerd: remove it from NOT_EMULATED"
    )


def test_the_record_still_names_offsets() -> None:
    assert OFFSET.search(json.dumps(RECORD)) is not None, "no SQL error names an offset now: drop OFFSET"


@pytest.mark.parametrize("case", NAMED_PARAMETERS)
def test_named_parameters_by_position_follow_pythons_sqlite3(
    case: str, runtime_record: dict[str, Any]
) -> None:
    # Equal to workerd up to Python 3.12; from 3.13 the driver's warning escapes instead of the row.
    assert bool(_found(case, runtime_record)) == (sys.version_info >= (3, 13))
