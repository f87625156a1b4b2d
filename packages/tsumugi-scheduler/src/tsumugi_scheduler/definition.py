"""``define_tsumugi(...)``: what a scheduler Worker is configured with, validated when it is defined.

People type this configuration, so it is read with pydantic (strict, unknown keys refused) and every error
names the option and the rule, e.g. ``bindings.MAIL.policy.concurrency must be at least 0``. The result is a
frozen `TsumugiDefinition` of core values the rest of the scheduler reads.

Example:
    >>> app = define_tsumugi(
    ...     performers=["Hello", "NotifyFailure"],
    ...     bindings={"Hello": {"shards": 2, "policy": {"concurrency": 5}}},
    ...     on_failure="NotifyFailure",
    ... )
    >>> app.shards_of("Hello"), app.settings_of("Hello").policy.concurrency
    (2, 5)
    >>> define_tsumugi(on_settled={"binding": "X", "states": []})
    Traceback (most recent call last):
    ...
    tsumugi_scheduler.definition.DefinitionError: on_settled.states must list at least one of COMPLETED, FAILED, CANCELLED, STALLED
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, cast

import msgspec
import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import FlowSpec
from tsumugi_core.ids import InvalidJobIdError, validate_binding_name
from tsumugi_core.options import RateLimit
from tsumugi_core.policy import Policy, PolicyValidationError, Retention, ShardSettings, validate_settings
from tsumugi_core.schedule_spec import InvalidScheduleError
from tsumugi_core.states import TERMINAL_STATES, JobState
from tsumugi_core.time_values import with_milliseconds
from tsumugi_scheduler.definition_types import (
    BindingOptions,
    OnSettledOptions,
    RetentionOptions,
    RunOptions,
    ScheduleOptions,
)
from tsumugi_scheduler.identity import AnyOf, AuthScheme
from tsumugi_scheduler.run.settings import RunSettings, flow_registry, run_settings
from tsumugi_scheduler.schedules.code import CodeSchedules, code_schedules
from tsumugi_scheduler.shard import NoticeConfig

__all__ = [
    "DEFAULT_AUTH_CHOICE",
    "DEFAULT_SWEEP_LIMIT",
    "DEFAULT_SWEEP_OLDER_THAN_MS",
    "DefinitionError",
    "OnEnqueueHook",
    "SweepOptions",
    "TsumugiDefinition",
    "define_tsumugi",
]

DEFAULT_SWEEP_OLDER_THAN_MS: Final = 604_800_000
"""The read model keeps finished jobs 7 days (the original's retention.olderThanMs)."""
DEFAULT_SWEEP_LIMIT: Final = 1000
"""Rows the cron sweep deletes per run (the original's retention.limit)."""

OnEnqueueHook = Callable[[Any], Any]
"""``on_enqueue(item) -> defaults | None`` (optionally async); see tsumugi_client.apply_defaults."""

DEFAULT_AUTH_CHOICE: Final = "default"
"""``define_tsumugi``'s ``auth`` when left out: the role tokens (`tsumugi_scheduler.sign_in.bearer_tokens`)."""

_SETTLED_CHOICES: Final = ", ".join(s.value for s in JobState if s in TERMINAL_STATES)


class DefinitionError(InvalidFieldError):
    """A ``define_tsumugi`` option broke a rule; the message is ``<option> <rule>``.

    Attributes:
        field: The option's path, e.g. ``bindings.MAIL.shards``.
        rule: What the value must satisfy.
    """

    @property
    def option(self) -> str:
        """The option's path: the same as `field` (its earlier name)."""
        return self.field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _RateModel(_Strict):
    tokens: int
    interval_ms: int


class _PolicyModel(_Strict):
    concurrency: int | None = None
    rate: _RateModel | None = None
    per_key_concurrency: int | None = None
    per_key_rate: _RateModel | None = None
    aging_interval_ms: int | None = Field(default=None)
    aging_disabled: bool = False
    reaper_grace_ms: int | None = None
    paused: bool | None = None


class _BindingModel(_Strict):
    shards: int = Field(default=1, ge=1)
    policy: _PolicyModel = _PolicyModel()
    sweep_after_ms: int | None = None
    failed_retention_ms: int | None = None


class _OnSettledModel(_Strict):
    binding: str
    states: list[str]


class _RetentionModel(_Strict):
    # At most JavaScript's safe integer: D1 binds no larger one, and the hourly sweep failed on it.
    older_than_ms: int = Field(default=DEFAULT_SWEEP_OLDER_THAN_MS, ge=1, le=2**53 - 1)
    limit: int = Field(default=DEFAULT_SWEEP_LIMIT, ge=1, le=2**53 - 1)


class SweepOptions(msgspec.Struct, frozen=True, kw_only=True):
    """The cron sweep of the read model: finished rows older than ``older_than_ms``, ``limit`` per run."""

    older_than_ms: int = DEFAULT_SWEEP_OLDER_THAN_MS
    limit: int = DEFAULT_SWEEP_LIMIT


_TYPE_RULES: Final = {
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "int_parsing": "must be an integer",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "list_type": "must be a list",
    "dict_type": "must be a mapping of options",
    "model_type": "must be a mapping of options",
}
"""pydantic error types that mean "wrong kind of value", with the house-style rule for each."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _option_path(prefix: str, loc: Sequence[int | str]) -> str:
    path = prefix
    for part in loc:
        # List positions read as indexes (``on_settled.states[1]``), keys as dotted options.
        path = f"{path}[{part}]" if isinstance(part, int) else f"{path}.{part}" if path else str(part)
    return path


def _rule(kind: str, context: Mapping[str, Any], value: object) -> str:
    if kind == "extra_forbidden":
        return "is not a known option"
    if kind == "missing":
        return "is required"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = {
            "greater_than_equal": ("at least", "ge"),
            "greater_than": ("more than", "gt"),
            "less_than_equal": ("at most", "le"),
            "less_than": ("less than", "lt"),
        }[kind]
        return f"must be {bound[0]} {context[bound[1]]}"
    if kind == "literal_error":
        return f"must be one of {context['expected']}, got {_shown(value)}"
    if kind in _TYPE_RULES:
        return f"{_TYPE_RULES[kind]}, got {_shown(value)}"
    # An error type this mapping does not know yet: keep pydantic's words rather than hide the cause.
    return f"is invalid: {str(context.get('error', '')) or kind}"


def _pydantic_error(prefix: str, error: pydantic.ValidationError) -> DefinitionError:
    """The first of pydantic's errors in the house style ``<option path> <rule>`` (no pydantic wording)."""
    first = error.errors()[0]
    rule = _rule(first["type"], first.get("ctx") or {}, first.get("input"))
    return DefinitionError(_option_path(prefix, first["loc"]), rule)


def _rate(model: _RateModel | None) -> RateLimit | None:
    return None if model is None else RateLimit(tokens=model.tokens, interval_ms=model.interval_ms)


def _aging_interval(name: str, given: _PolicyModel, base: Policy) -> int | None:
    """The aging interval: absent keeps the default; ``None`` or ``aging_disabled`` turn aging off."""
    explicit = "aging_interval_ms" in given.model_fields_set
    if given.aging_disabled:
        if explicit and given.aging_interval_ms is not None:
            raise DefinitionError(
                f"bindings.{name}.policy.aging_disabled", "cannot be combined with an aging_interval_ms"
            )
        return None
    # An explicit 0 stays 0 here so validate_settings refuses it by name (it would divide by zero).
    return given.aging_interval_ms if explicit else base.aging_interval_ms


def _settings(name: str, model: _BindingModel) -> ShardSettings:
    given = model.policy
    base = Policy()
    policy = Policy(
        concurrency=base.concurrency if given.concurrency is None else given.concurrency,
        rate=_rate(given.rate),
        per_key_concurrency=(
            base.per_key_concurrency if given.per_key_concurrency is None else given.per_key_concurrency
        ),
        per_key_rate=_rate(given.per_key_rate),
        aging_interval_ms=_aging_interval(name, given, base),
        reaper_grace_ms=base.reaper_grace_ms if given.reaper_grace_ms is None else given.reaper_grace_ms,
        paused=bool(given.paused),
    )
    # ``is None``, not ``or``: zero is a real value (keep finished jobs no time at all), and the core allows it.
    defaults = Retention()
    retention = Retention(
        sweep_after_ms=defaults.sweep_after_ms if model.sweep_after_ms is None else model.sweep_after_ms,
        failed_retention_ms=(
            defaults.failed_retention_ms if model.failed_retention_ms is None else model.failed_retention_ms
        ),
    )
    settings = ShardSettings(policy=policy, retention=retention)
    try:
        validate_settings(settings)
    except PolicyValidationError as exc:
        # Nested fields (``rate.tokens``) belong to the policy when their first segment is a Policy field.
        section = "policy" if exc.field.split(".")[0] in Policy.__struct_fields__ else ""
        option = ".".join(p for p in ("bindings", name, section, exc.field) if p)
        raise DefinitionError(option, exc.rule) from None
    return settings


def _in_ms(prefix: str, raw: object, durations: tuple[str, ...]) -> object:
    """``raw`` with its `timedelta` durations in milliseconds (ADR-0142); anything but a mapping unchanged."""
    if not isinstance(raw, Mapping):
        return raw
    try:
        converted: dict[str, Any] = with_milliseconds(cast("Mapping[str, Any]", raw), durations)
    except InvalidFieldError as exc:
        raise DefinitionError(f"{prefix}.{exc.field}", exc.rule) from None
    return converted


def _binding_in_ms(name: str, raw: object) -> object:
    binding = _in_ms(f"bindings.{name}", raw, ("sweep_after_ms", "failed_retention_ms"))
    if not isinstance(binding, dict):
        return binding
    fields = cast("dict[str, Any]", binding)
    if "policy" not in fields:
        return fields
    policy = _in_ms(f"bindings.{name}.policy", fields["policy"], ("aging_interval_ms", "reaper_grace_ms"))
    if isinstance(policy, dict):
        rules = cast("dict[str, Any]", policy)
        for rate in ("rate", "per_key_rate"):
            if rate in rules:
                rules[rate] = _in_ms(f"bindings.{name}.policy.{rate}", rules[rate], ("interval_ms",))
    with_policy: dict[str, Any] = {**fields, "policy": policy}
    return with_policy


def _binding_name(option: str, value: object) -> str:
    name = value if isinstance(value, str) else getattr(value, "__name__", None)
    if not isinstance(name, str):
        raise DefinitionError(option, f"must be a binding name or a Performer class, got {value!r}")
    try:
        return validate_binding_name(name)
    except InvalidJobIdError as exc:
        raise DefinitionError(option, f"is invalid: {exc}") from None


class TsumugiDefinition:
    """A validated scheduler configuration; make it with `define_tsumugi`."""

    def __init__(
        self,
        *,
        performers: tuple[str, ...],
        bindings: Mapping[str, tuple[int, ShardSettings]],
        notices: NoticeConfig,
        on_enqueue: OnEnqueueHook | None,
        sweep: SweepOptions,
        schedules: CodeSchedules | None = None,
        schedule_shards: int = 1,
        flows: Mapping[str, FlowSpec] | None = None,
        runs: RunSettings | None = None,
        auth: AuthScheme | Literal["default"] | None = DEFAULT_AUTH_CHOICE,
    ) -> None:
        """Hold already validated values (use `define_tsumugi`)."""
        self.auth = auth
        """How requests sign in; ``"default"`` for the role tokens, None for no API at all (ADR-0151)."""
        self.flows: dict[str, FlowSpec] = dict(flows or {})
        """Declared flows by name."""
        self.runs = runs or RunSettings()
        """Runs' limits and retention."""
        self.performers = performers
        self._bindings = dict(bindings)
        self.notices = notices
        self.on_enqueue = on_enqueue
        self.sweep = sweep
        self.schedules = schedules or CodeSchedules({}, {})
        self.schedule_shards = schedule_shards

    def shards_of(self, binding: str) -> int:
        """How many shards ``binding`` is split into (1 unless configured)."""
        found = self._bindings.get(binding)
        return 1 if found is None else found[0]

    def settings_of(self, binding: str) -> ShardSettings | None:
        """The code's settings for ``binding``; None when the definition does not configure it."""
        found = self._bindings.get(binding)
        return None if found is None else found[1]

    def is_registered(self, binding: str) -> bool:
        """True when ``binding`` may receive jobs: any binding when no performers are listed."""
        return not self.performers or binding in self.performers


def _notices(on_failure: object, on_settled: object, registered: tuple[str, ...]) -> NoticeConfig:
    failure = None if on_failure is None else _binding_name("on_failure", on_failure)
    settled_binding: str | None = None
    states: frozenset[JobState] = frozenset()
    if on_settled is not None:
        try:
            model = _OnSettledModel.model_validate(on_settled)
        except pydantic.ValidationError as exc:
            raise _pydantic_error("on_settled", exc) from None
        settled_binding = _binding_name("on_settled.binding", model.binding)
        if not model.states:
            raise DefinitionError("on_settled.states", f"must list at least one of {_SETTLED_CHOICES}")
        for state in model.states:
            if state not in {s.value for s in TERMINAL_STATES}:
                raise DefinitionError(
                    "on_settled.states", f"must hold only {_SETTLED_CHOICES}, got {state!r}"
                )
        states = frozenset(JobState(s) for s in model.states)
    for option, name in (("on_failure", failure), ("on_settled.binding", settled_binding)):
        if name is not None and registered and name not in registered:
            raise DefinitionError(option, f"must be one of the performers, got {name!r}")
    return NoticeConfig(on_failure=failure, on_settled_binding=settled_binding, on_settled_states=states)


def _payload_types(performers: object) -> dict[str, Any]:
    """The payload JSON Schema of each performer given as a class (its ``payload_type()``, as it publishes it);
    a type msgspec cannot describe is left out (not checked, as at enqueue)."""
    found: dict[str, Any] = {}
    for performer in cast("Iterable[object]", performers):
        payload_type = getattr(performer, "payload_type", None)
        name = getattr(performer, "__name__", None)
        if isinstance(performer, type) and callable(payload_type) and isinstance(name, str):
            try:
                found[name] = msgspec.json.schema(payload_type())
            except (TypeError, ValueError):
                continue
    return found


def _performers(performers: object) -> tuple[str, ...]:
    # A str is iterable, so "Hello" would silently become the bindings H, e, l, l, o; a mapping would
    # lose its values. Both are refused as the wrong shape rather than guessed at.
    if isinstance(performers, (str, bytes, bytearray, Mapping)) or not isinstance(performers, Iterable):
        raise DefinitionError("performers", "must be a list of binding names or Performer classes")
    items = cast("Iterable[object]", performers)
    return tuple(_binding_name(f"performers[{i}]", p) for i, p in enumerate(items))


def _bindings(bindings: object, registered: tuple[str, ...]) -> dict[str, tuple[int, ShardSettings]]:
    if bindings is None:
        return {}
    if not isinstance(bindings, Mapping):
        raise DefinitionError(
            "bindings", f"must be a mapping of binding name to options, got {_shown(bindings)}"
        )
    configured: dict[str, tuple[int, ShardSettings]] = {}
    for key, raw in cast("Mapping[object, object]", bindings).items():
        name = _binding_name(f"bindings.{key}", key)
        if registered and name not in registered:
            # Settings for a binding no job can be enqueued for are a typo, not a harmless extra.
            raise DefinitionError(
                f"bindings.{name}", f"is not one of the performers ({', '.join(registered)})"
            )
        try:
            model = _BindingModel.model_validate(_binding_in_ms(name, raw))
        except pydantic.ValidationError as exc:
            raise _pydantic_error(f"bindings.{name}", exc) from None
        configured[name] = (model.shards, _settings(name, model))
    return configured


def _auth(auth: object) -> AuthScheme | Literal["default"] | None:
    if auth is None or auth == DEFAULT_AUTH_CHOICE or isinstance(auth, AuthScheme):
        return cast("AuthScheme | Literal['default'] | None", auth)
    if isinstance(auth, list | tuple):
        schemes = cast("list[object] | tuple[object, ...]", auth)
        for i, scheme in enumerate(schemes):
            if not isinstance(scheme, AuthScheme):
                raise DefinitionError(f"auth[{i}]", f"must be a sign-in scheme, got {_shown(scheme)}")
        if not schemes:
            raise DefinitionError("auth", "must list at least one sign-in scheme (None turns the API off)")
        return AnyOf(cast("list[AuthScheme]", list(schemes)))
    raise DefinitionError(
        "auth",
        "must be bearer_tokens(), cloudflare_access(...), custom_auth(fn), a list of them, or None, "
        f"got {_shown(auth)}",
    )


def define_tsumugi(
    *,
    performers: Sequence[str | type] = (),
    bindings: Mapping[str, BindingOptions] | None = None,
    on_enqueue: OnEnqueueHook | None = None,
    on_failure: str | type | None = None,
    on_settled: OnSettledOptions | None = None,
    retention: RetentionOptions | None = None,
    schedules: Mapping[str, ScheduleOptions] | None = None,
    schedule_shards: int = 1,
    flows: Sequence[object] = (),
    runs: RunOptions | None = None,
    auth: object = DEFAULT_AUTH_CHOICE,
) -> TsumugiDefinition:
    """Define a scheduler: its performers, per-binding settings, hooks and read-model retention.

    The options are typed (`tsumugi_scheduler.definition_types`), so pyright reports a misspelt key; every
    value is still checked here. Durations take milliseconds or a `datetime.timedelta`.

    Args:
        performers: A list of binding names (or Performer classes, by class name) jobs may be enqueued
            for; empty accepts any binding. A bare string is refused, not split into letters.
        bindings: ``{binding: {"shards": N, "policy": {...}, "sweep_after_ms": ms, "failed_retention_ms": ms}}``;
            policy keys: concurrency, rate ``{"tokens", "interval_ms"}``, per_key_concurrency, per_key_rate,
            aging_interval_ms (at least 1; ``None`` or ``aging_disabled: True`` turn aging off),
            reaper_grace_ms, paused. Retention 0 is honoured: finished jobs leave the shard at once.
            With performers listed, every key must be one of them.
        on_enqueue: Defaults for options a producer left out (docs/reference/additions.md A1).
        on_failure: The binding that receives a FailureNotice for every FAILED or STALLED job (A2).
        on_settled: ``{"binding": ..., "states": [...]}``; a SettledNotice per job ending in those states (A3).
        retention: ``{"older_than_ms": ms, "limit": n}`` for the cron sweep of the read model.
        schedules: ``{name: {"binding", "payload" (value or ``fn(scheduled_at)``), "every_ms" | "cron",
            "timezone", "overlap", job options}}``: recurring jobs, fired by the Scheduler Durable Object. A
            payload value must fit the payload type of its performer when that is listed as a class.
        schedule_shards: How many Scheduler objects share the schedules, by name (ADR-0079).
        flows: Flows declared with ``tsumugi_performer.flow`` that runs may start; a subflow's child flow
            must be listed too.
        runs: ``{"max_nodes", "max_depth", "sweep_after_ms", "failed_retention_ms"}`` for flow runs.
        auth: How the REST API and dashboard sign in (`tsumugi_scheduler.sign_in`): ``bearer_tokens()``
            (the default), ``cloudflare_access(...)``, ``custom_auth(fn)``, a list of them tried in order, or
            None for no API and no dashboard (404 everywhere).

    Raises:
        DefinitionError: an option breaks a rule; the message names it.
    """
    registered = _performers(performers)
    auth_choice = _auth(auth)
    if on_enqueue is not None and not callable(on_enqueue):
        raise DefinitionError("on_enqueue", f"must be callable, got {type(on_enqueue).__name__}")
    configured = _bindings(bindings, registered)
    try:
        sweep_model = _RetentionModel.model_validate(_in_ms("retention", retention or {}, ("older_than_ms",)))
    except pydantic.ValidationError as exc:
        raise _pydantic_error("retention", exc) from None
    if isinstance(schedule_shards, bool) or not isinstance(schedule_shards, int) or schedule_shards < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise DefinitionError("schedule_shards", f"must be an integer of at least 1, got {schedule_shards!r}")
    shard_counts = {name: count for name, (count, _) in configured.items()}
    try:
        flow_specs = flow_registry(flows, registered)
        run_limits = run_settings(
            cast("Mapping[str, Any] | None", _in_ms("runs", runs, ("sweep_after_ms", "failed_retention_ms")))
        )
    except InvalidFieldError as exc:
        raise DefinitionError(exc.field, exc.rule) from None
    try:
        code = code_schedules(
            schedules,
            registered=registered,
            shards=shard_counts,
            flows=flow_specs,
            payload_types=_payload_types(performers),
        )
    except InvalidScheduleError as exc:
        raise DefinitionError(exc.field, exc.rule) from None
    return TsumugiDefinition(
        auth=auth_choice,
        schedules=code,
        schedule_shards=schedule_shards,
        flows=flow_specs,
        runs=run_limits,
        performers=registered,
        bindings=configured,
        notices=_notices(on_failure, on_settled, registered),
        on_enqueue=on_enqueue,
        sweep=SweepOptions(older_than_ms=sweep_model.older_than_ms, limit=sweep_model.limit),
    )
