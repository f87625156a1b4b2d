"""The scheduler's producer and performer surface (docs/design/scheduler-rpc.md §2), shared by RPC and REST.

`SchedulerService` validates every item of a call before any shard sees one, applies the scheduler's
on_enqueue defaults (the caller's values win), routes each item to its shard (checking a caller-given
``shard``), and sends one ``enqueue_many`` per shard, different shards in parallel. Mutations and reads go to
the job's shard. Refusals are answers; invalid input raises `EnqueueValidationError` ``<field> <rule>``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from tsumugi_core.enqueue_defaults import apply_defaults
from tsumugi_core.ids import InvalidJobIdError, parse_job_id, shard_name
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.near_names import did_you_mean
from tsumugi_core.options import (
    MAX_RESCHEDULE_DELAY_MS,
    CheckedJob,
    EnqueueItem,
    EnqueueValidationError,
    check_enqueue,
    check_instant,
    check_priority,
)
from tsumugi_core.policy import Policy, Retention, ShardSettings, validate_settings
from tsumugi_core.sharding import resolve_shard
from tsumugi_scheduler import _runtime
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.payload_schemas import PayloadSchemas
from tsumugi_scheduler.remote_errors import is_missing_method
from tsumugi_scheduler.wire import convert_integral, convert_plain, integral, integral_shared, shard_of_job

__all__ = [
    "MAX_BATCH_ITEMS",
    "PinnedIdConflictError",
    "SchedulerService",
    "ShardConflictError",
    "bare_field",
    "decode_item",
]


class ShardConflictError(EnqueueValidationError):
    """A well-formed ``shard`` that is not this scheduler's shard for the item: the caller routes with
    another bindings config (the REST API answers it with 409, ADR-0059)."""


MAX_BATCH_ITEMS: Final = 500
"""Most items in one enqueue call."""

_ENCODE: Final = msgspec.json.Encoder().encode
_ITEM_KEYS: Final = frozenset(f.encode_name for f in msgspec.structs.fields(EnqueueItem))


class PinnedIdConflictError(EnqueueValidationError):
    """A pinned ``id`` of another binding than the item's: well-formed, but in conflict with the item (the REST
    API answers it with 409, as a shard conflict; ADR-0125)."""


def _prefixed(where: str, error: EnqueueValidationError) -> EnqueueValidationError:
    return type(error)(f"{where}.{error.field}", error.rule)


def bare_field(error: EnqueueValidationError, where: str) -> EnqueueValidationError:
    """``error`` with the item's ``where`` prefix dropped from its field (``items[0].priority`` -> ``priority``)."""
    return type(error)(error.field.removeprefix(where).lstrip(".") or "item", error.rule)


def decode_item(raw: object, where: str) -> tuple[EnqueueItem, int | None]:
    """One camelCase enqueue item and its caller-given ``shard``.

    Raises:
        EnqueueValidationError: the item is not an object, has an unknown key or a value of the wrong type.
    """
    if not isinstance(raw, Mapping):
        raise EnqueueValidationError(where, f"must be an object, got {type(raw).__name__}")
    # A copy of the top level, so the pops below never touch the caller's; floats are read once, here.
    fields: dict[str, Any] = integral_shared(dict(raw))  # pyright: ignore[reportUnknownArgumentType]
    shard = fields.pop("shard", None)
    if shard is not None and (isinstance(shard, bool) or not isinstance(shard, int) or shard < 0):
        raise EnqueueValidationError(f"{where}.shard", f"must be a non-negative integer, got {shard!r}")
    for key in fields:
        if key not in _ITEM_KEYS:
            raise EnqueueValidationError(f"{where}.{key}", "is not an enqueue option")
    for key in ("binding", "payload"):
        if key not in fields:
            raise EnqueueValidationError(f"{where}.{key}", "is required")
    return convert_integral(fields, EnqueueItem, where), shard


def _settings_from_original(settings: object) -> ShardSettings | None:
    # The original piggy-backs {"policy": {...}, "sweepAfterMs": n, "failedRetentionMs": n}.
    if settings is None:
        return None
    if not isinstance(settings, Mapping):
        raise EnqueueValidationError("settings", "must be an object")
    raw: Mapping[str, Any] = settings  # pyright: ignore[reportUnknownVariableType]
    policy = convert_plain(raw.get("policy") or {}, Policy, "settings.policy")
    defaults = Retention()
    retention = Retention(
        sweep_after_ms=int(raw.get("sweepAfterMs") or defaults.sweep_after_ms),
        failed_retention_ms=int(raw.get("failedRetentionMs") or defaults.failed_retention_ms),
    )
    return ShardSettings(policy=policy, retention=retention)


def _integral_payload(item: EnqueueItem) -> EnqueueItem:
    """``item`` with its payload as a shard reads its JSON: integral floats as integers (as `decode_item` reads
    a sent one), inside tuples, dataclasses and Structs too (as msgspec encodes them)."""
    payload = item.payload
    if not _plain_containers(payload):
        try:
            payload = msgspec.to_builtins(payload)  # tuples stay: integral makes them lists
        except (TypeError, ValueError):
            return item  # check_enqueue names what is wrong with it
    payload = integral_shared(payload)
    return item if payload is item.payload else msgspec.structs.replace(item, payload=payload)


def _plain_containers(value: Any) -> bool:
    """Whether ``value`` holds no container but plain dicts and lists (a walk that allocates nothing)."""
    kind: type = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is dict:
        mapping: dict[Any, Any] = value
        return all(_plain_containers(v) for v in mapping.values())
    if kind is list:
        sequence: list[Any] = value
        return all(_plain_containers(v) for v in sequence)
    return kind in (str, int, float, bool) or value is None


def _check_pinned_binding(item: EnqueueItem) -> None:
    if not isinstance(item.id, str) or not isinstance(item.binding, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        return
    try:
        pinned = parse_job_id(item.id).binding
    except InvalidJobIdError:
        return  # validate_enqueue names what is wrong with it
    if pinned != item.binding:
        raise PinnedIdConflictError("id", f"must belong to binding {item.binding}: {item.id}")


_Prepared = tuple[EnqueueItem, str, CheckedJob]
"""An item as the caller gave it (its defaults applied), its shard's name, and the job it was checked into."""


async def _older_shard(
    stub: Any, name: str, items: list[EnqueueItem], code: ShardSettings | None, settings: str | None
) -> list[Any]:
    """The ids of ``items`` stored by a shard predating ``enqueue_checked``, which checks them itself."""
    try:
        # JSON text both ways: one C call on each side (ADR-0166).
        return msgspec.json.decode(await stub.enqueue_json(name, _ENCODE(items).decode(), settings))
    except Exception as exc:
        if not is_missing_method(exc, "enqueue_json"):
            raise
    # A shard predating enqueue_json: plain data, converted in one walk (ADR-0129).
    return await _runtime.JsonCalls(stub).enqueue_many(
        name, msgspec.to_builtins(items), None if code is None else msgspec.to_builtins(code)
    )


class SchedulerService:
    """Producer and performer calls, over the JobShard namespace of ``env``."""

    def __init__(
        self,
        env: Any,
        definition: TsumugiDefinition,
        schemas: PayloadSchemas | None = None,
        exports: Any = None,
    ) -> None:
        """Serve with the bindings of ``env`` and the scheduler's ``definition``.

        ``schemas`` caches the performers' payload schemas; give the isolate's own (a fresh cache asks each
        performer again). ``exports`` (``ctx.exports``) finds performers the scheduler Worker exports itself.
        """
        self._env = env
        self._definition = definition
        self._schemas = schemas if schemas is not None else PayloadSchemas()
        self._exports = exports

    def _stub(self, name: str) -> Any:
        return self._env.JOB_SHARD.getByName(name)

    async def _prepare(self, raw: object, where: str, *, internal: bool = False) -> _Prepared:
        item, given = decode_item(raw, where)
        return await self._prepare_item(item, given, where, internal=internal)

    async def _prepare_item(
        self, item: EnqueueItem, given: int | None, where: str, *, internal: bool = False
    ) -> _Prepared:
        if not internal and (item.run_id is not None or item.node_id is not None):
            # Only the Run object ties a job to a run: a caller's job adopted by a node would stand in for the
            # node's own (ADR-0115).
            field = "run_id" if item.run_id is not None else "node_id"
            raise EnqueueValidationError(f"{where}.{field}", "is set only by the run a job belongs to")
        hook = self._definition.on_enqueue
        try:
            if hook is not None:
                defaults = hook(item)
                if inspect.isawaitable(defaults):
                    defaults = await defaults
                item = apply_defaults(item, defaults)
            _check_pinned_binding(item)
            checked = check_enqueue(item)
        except EnqueueValidationError as exc:
            raise _prefixed(where, exc) from None
        if not self._definition.is_registered(item.binding):
            hint = did_you_mean(item.binding, self._definition.performers)
            rule = f"is not a registered performer: {item.binding}{hint}"
            raise EnqueueValidationError(f"{where}.binding", rule)
        try:
            await self._schemas.check(item.binding, item.payload, self._env, self._exports)
        except InvalidValueError as exc:  # the performer's published payload type refuses it (ADR-0075)
            raise EnqueueValidationError(f"{where}.{exc.path('payload')}", exc.rule) from None
        return item, shard_name(item.binding, self._shard_of(item, given, where)), checked

    def _shard_of(self, item: EnqueueItem, given: int | None, where: str) -> int:
        if item.id is not None:
            shard = parse_job_id(item.id).shard
            shards = self._definition.shards_of(item.binding)
            if shard >= shards:
                # Its shard would be an object no route serves: the job could never be read or steered.
                raise EnqueueValidationError(
                    f"{where}.id", f"is invalid: shard {shard} is beyond {item.binding}'s {shards} shard(s)"
                )
        else:
            try:
                shard = resolve_shard(
                    item.binding, self._definition.shards_of(item.binding), item.partition_key
                )
            except InvalidJobIdError as exc:
                raise EnqueueValidationError(f"{where}.partition_key", f"is required: {exc}") from None
        if given is not None and given != shard:
            raise ShardConflictError(
                f"{where}.shard",
                f"must be {shard}, the scheduler's shard for this item: the caller's bindings config differs",
            )
        return shard

    async def enqueue_many(self, items: object, settings: object = None) -> list[str]:
        """Enqueue 1..500 items; ids in input order (existing ids for dedup hits).

        Raises:
            EnqueueValidationError: any item is invalid (nothing is stored).
        """
        if not isinstance(items, Sequence) or isinstance(items, str | bytes):
            raise EnqueueValidationError("items", "must be a list of enqueue items")
        batch: Sequence[object] = items  # pyright: ignore[reportUnknownVariableType]
        if not 1 <= len(batch) <= MAX_BATCH_ITEMS:
            raise EnqueueValidationError("items", f"must hold 1 to {MAX_BATCH_ITEMS} items, got {len(batch)}")
        given_settings = _settings_from_original(settings)
        if given_settings is not None:
            # Before any shard stores: a shard whose binding has settings in code never reads these, so the
            # others' refusal would come after its jobs were stored.
            validate_settings(given_settings)
        prepared = [await self._prepare(raw, f"items[{i}]") for i, raw in enumerate(batch)]
        return await self._send(prepared, given_settings)

    async def enqueue_items(self, items: Sequence[EnqueueItem]) -> list[str]:
        """`enqueue_many` of items the scheduler built itself (a schedule's occurrences): the same checks,
        defaults and routing, without the round trip through camelCase dicts (ADR-0165).

        Raises:
            EnqueueValidationError: any item is invalid (nothing is stored).
        """
        if not 1 <= len(items) <= MAX_BATCH_ITEMS:
            raise EnqueueValidationError("items", f"must hold 1 to {MAX_BATCH_ITEMS} items, got {len(items)}")
        prepared = [
            await self._prepare_item(_integral_payload(item), None, f"items[{i}]")
            for i, item in enumerate(items)
        ]
        return await self._send(prepared, None)

    async def enqueue_valid(
        self, items: Sequence[Mapping[str, Any]], steps_from: Sequence[str | None] | None = None
    ) -> list[str | EnqueueValidationError]:
        """Enqueue the valid ones of 1..500 items; an invalid item's place holds its error instead, its field
        named bare (``max_attempts must be at least 1``). The Run object's starts: one node's invalid job
        fails that node alone, and each item is checked once.

        ``steps_from``, when given, holds one entry per item: the job whose steps item ``i``'s job takes as its
        shard stores it, in the same transaction (a resumed run node's, ADR-0176, ADR-0184), or None. A refused
        item takes none.
        """
        if not 1 <= len(items) <= MAX_BATCH_ITEMS:
            raise EnqueueValidationError("items", f"must hold 1 to {MAX_BATCH_ITEMS} items, got {len(items)}")
        errors: list[EnqueueValidationError | None] = []
        prepared: list[_Prepared] = []
        sources: list[str | None] = []
        for position, raw in enumerate(items):
            try:
                prepared.append(await self._prepare(raw, "item", internal=True))
                sources.append(None if steps_from is None else steps_from[position])
                errors.append(None)
            except EnqueueValidationError as exc:
                errors.append(bare_field(exc, "item"))
        ids = iter(await self._send(prepared, None, sources) if prepared else [])
        return [next(ids) if error is None else error for error in errors]

    async def _send(
        self,
        prepared: list[_Prepared],
        given_settings: ShardSettings | None,
        steps_from: Sequence[str | None] = (),
    ) -> list[str]:
        groups: dict[str, list[int]] = {}
        for position, (_, name, _) in enumerate(prepared):
            groups.setdefault(name, []).append(position)
        ids: list[str] = [""] * len(prepared)

        async def send(name: str, positions: list[int]) -> None:
            binding = prepared[positions[0]][0].binding
            code = self._definition.settings_of(binding) or given_settings
            stub = self._stub(name)
            settings = None if code is None else _ENCODE(code).decode()
            sources: dict[str, str] = {}
            for p in positions:
                job_id, source = prepared[p][2].id, (steps_from[p] if p < len(steps_from) else None)
                if job_id is not None and source is not None:
                    sources[job_id] = source
            try:
                # The checked jobs, as JSON text both ways: the shard checks no option again (ADR-0172).
                checked = _ENCODE([prepared[p][2] for p in positions]).decode()
                if sources:  # only then a fourth argument, which a shard of the version before refuses
                    text = await stub.enqueue_checked(name, checked, settings, _ENCODE(sources).decode())
                else:
                    text = await stub.enqueue_checked(name, checked, settings)
                answer: list[Any] = msgspec.json.decode(text)
            except Exception as exc:
                if not is_missing_method(exc, "enqueue_checked"):
                    raise
                answer = await _older_shard(stub, name, [prepared[p][0] for p in positions], code, settings)
            for position, job_id in zip(positions, answer, strict=True):
                ids[position] = str(job_id)

        await asyncio.gather(*(send(name, positions) for name, positions in groups.items()))
        return ids

    async def get(self, job_id: object) -> dict[str, Any] | None:
        """The job's detail from its shard, or None."""
        name = shard_of_job(job_id)
        answer = await self._stub(name).get(name, job_id)
        return None if answer is None else dict(answer)

    async def cancel(self, job_id: object) -> dict[str, Any]:
        """Cancel (or ask to stop); ``{"ok": true, "requested": bool}`` or a refusal."""
        name = shard_of_job(job_id)
        return dict(await self._stub(name).cancel(name, job_id))

    async def retry(self, job_id: object) -> dict[str, Any]:
        """Retry a FAILED / STALLED job now; ``{"ok": true}`` or a refusal."""
        name = shard_of_job(job_id)
        return dict(await self._stub(name).retry(name, job_id))

    async def reschedule(self, job_id: object, body: object) -> dict[str, Any]:
        """Move a SCHEDULED job: body ``{"runAt": n}`` or ``{"delayMs": n}``, optional ``"priority"``.

        Raises:
            EnqueueValidationError: the body breaks a rule (fields ``run_at``, ``delay_ms``, ``priority``).
        """
        name = shard_of_job(job_id)
        if not isinstance(body, Mapping):
            raise EnqueueValidationError("body", "must be an object")
        fields: dict[str, Any] = integral(dict(body))  # pyright: ignore[reportUnknownArgumentType]
        run_at, delay_ms, priority = fields.get("runAt"), fields.get("delayMs"), fields.get("priority")
        for field, value in (("run_at", run_at), ("delay_ms", delay_ms), ("priority", priority)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise EnqueueValidationError(field, f"must be an integer, got {value!r}")
        if (run_at is None) == (delay_ms is None):
            raise EnqueueValidationError("run_at", "and delay_ms: exactly one is required")
        if delay_ms is not None and delay_ms < 0:
            raise EnqueueValidationError("delay_ms", "must not be negative")
        if delay_ms is not None and delay_ms > MAX_RESCHEDULE_DELAY_MS:
            raise EnqueueValidationError(
                "delay_ms", f"must be at most {MAX_RESCHEDULE_DELAY_MS}, got {delay_ms}"
            )
        if run_at is not None:
            check_instant("run_at", run_at)
        if priority is not None:
            check_priority(priority)
        stub = self._stub(name)
        at = run_at if run_at is not None else int(await stub.now(name)) + int(delay_ms or 0)
        return dict(await stub.reschedule(name, job_id, at, priority))

    async def heartbeat(self, job_id: object, attempt: object, progress: object = None) -> dict[str, Any]:
        """Forward a performer's heartbeat; ``{"accepted": bool, "cancel_requested": bool}``."""
        name = shard_of_job(job_id)
        number = integral(attempt)
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise EnqueueValidationError("attempt", f"must be an integer of at least 1, got {attempt!r}")
        return dict(await self._stub(name).heartbeat(name, job_id, number, progress))
