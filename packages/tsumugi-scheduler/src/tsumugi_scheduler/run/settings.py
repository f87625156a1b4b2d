"""The runs' limits and retention (the original's ``runs`` options), and the registry of declared flows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.flow_spec import DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES, FlowSpec, NodeKind

__all__ = ["DEFAULT_RUN_FAILED_RETENTION_MS", "DEFAULT_RUN_SWEEP_AFTER_MS", "RunSettings", "flow_registry"]

DEFAULT_RUN_SWEEP_AFTER_MS: Final = 300_000
"""A finished (not FAILED) run's object is wiped 5 minutes after it settled."""
DEFAULT_RUN_FAILED_RETENTION_MS: Final = 604_800_000
"""A FAILED run stays resumable 7 days."""


class RunSettings(msgspec.Struct, frozen=True, kw_only=True):
    """``runs`` options: node and nesting limits, and how long a finished run's object is kept."""

    max_nodes: int = DEFAULT_MAX_NODES
    max_depth: int = DEFAULT_MAX_DEPTH
    sweep_after_ms: int = DEFAULT_RUN_SWEEP_AFTER_MS
    failed_retention_ms: int = DEFAULT_RUN_FAILED_RETENTION_MS


def _spec_of(value: object) -> FlowSpec | None:
    spec = value if isinstance(value, FlowSpec) else getattr(value, "spec", None)
    return spec if isinstance(spec, FlowSpec) else None


def flow_registry(flows: Iterable[object], registered: tuple[str, ...]) -> dict[str, FlowSpec]:
    """Flows by name; every subflow target and every binding (when performers are listed) must be known.

    Raises:
        InvalidFieldError: ``flows[i]`` or ``flows.<name>`` and the rule (define_tsumugi re-raises it as a
            DefinitionError).
    """
    by_name: dict[str, FlowSpec] = {}
    for i, value in enumerate(flows):
        spec = _spec_of(value)
        if spec is None:
            raise InvalidFieldError(
                f"flows[{i}]", f"must be a flow declared with tsumugi_performer.flow, got {value!r}"
            )
        if spec.name in by_name:
            raise InvalidFieldError(f"flows[{i}]", f"duplicates the flow name {spec.name}")
        by_name[spec.name] = spec
    for name, spec in by_name.items():
        for option, binding in (("on_failure", spec.on_failure), ("on_settled", spec.on_settled)):
            if binding is not None and registered and binding not in registered:
                raise InvalidFieldError(
                    f"flows.{name}.{option}", f"names {binding}, which is not a performer"
                )
        for node in spec.nodes:
            if node.kind is NodeKind.SUBFLOW and node.subflow not in by_name:
                raise InvalidFieldError(f"flows.{name}", f"subflow target is not registered: {node.subflow}")
            if node.kind is not NodeKind.SUBFLOW and registered and node.binding not in registered:
                raise InvalidFieldError(
                    f"flows.{name}", f"node {node.id} runs {node.binding}, which is not a performer"
                )
    return by_name


def run_settings(raw: Mapping[str, Any] | None) -> RunSettings:
    """``runs`` options as given (snake_case), checked.

    Raises:
        InvalidFieldError: ``runs.<key>`` and the rule.
    """
    given = cast(object, raw)  # callers may bypass typing
    if given is not None and not isinstance(given, Mapping):
        raise InvalidFieldError("runs", f"must be a mapping of options, got {type(given).__name__}")
    values = dict(raw or {})
    for key, value in values.items():
        if key not in RunSettings.__struct_fields__:
            raise InvalidFieldError(f"runs.{key}", "is not a known option")
        minimum = 1 if key in ("max_nodes", "max_depth") else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidFieldError(f"runs.{key}", f"must be an integer of at least {minimum}, got {value!r}")
    return RunSettings(**values)
