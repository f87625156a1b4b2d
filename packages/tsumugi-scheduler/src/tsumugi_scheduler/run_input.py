"""A run's input: the rules every start holds it to, wherever the start comes from (ADR-0175).

POST /api/runs, the producer RPC, a flow schedule and a parent's subflow node all start runs; each input is
portable JSON (ADR-0077), at most a job payload's size (a run's input is stored and sent as one), and fits the
flow's declared input type. The Run object checks again at its start, so a path that forgot is still refused.
"""

from __future__ import annotations

import msgspec

from tsumugi_core.exceptions import TsumugiError
from tsumugi_core.flow_spec import FlowSpec
from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.json_schema import Check, SchemaError, compile_schema
from tsumugi_core.options import MAX_PAYLOAD_BYTES
from tsumugi_core.portable import check_portable

__all__ = ["RunInputError", "RunStartError", "check_input_size", "check_run_input", "run_input_json"]


class RunStartError(TsumugiError, ValueError):
    """A start request broke a rule; the message is the original's (``unknown flow: X``...)."""


class RunInputError(RunStartError):
    """The run input does not fit the flow's input type: ``field`` (``input.<path>``) breaks ``rule``."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field} {rule}")
        self.field = field
        self.rule = rule


_checks: dict[int, tuple[FlowSpec, Check | None]] = {}
"""Compiled input schemas by flow spec (the spec kept beside its check, so a reused id never matches)."""


def check_run_input(spec: FlowSpec, value: object) -> None:
    """Check a run input against the flow's declared input type, as a job's payload is checked at enqueue.

    Raises:
        RunInputError: naming the path under ``input`` and the rule.
    """
    found = _checks.get(id(spec))
    if found is None or found[0] is not spec:
        try:
            check = None if spec.input_schema is None else compile_schema(spec.input_schema)
        except SchemaError:  # a schema this checker cannot read: the flow accepts any input, as before
            check = None
        found = _checks[id(spec)] = (spec, check)
    if found[1] is None:
        return
    try:
        found[1](value)
    except InvalidValueError as exc:
        raise RunInputError(exc.path("input"), exc.rule) from None


def run_input_json(spec: FlowSpec, value: object) -> str:
    """``value`` as the JSON text a run stores, once it keeps every rule of a run's input.

    Raises:
        RunInputError: naming the path under ``input`` and the rule (not portable, too large, the wrong type).
    """
    try:
        check_portable(value)  # as for a job's payload (ADR-0077): 1e400 would be stored as null
    except InvalidValueError as exc:
        raise RunInputError(exc.path("input"), exc.rule) from None
    text = msgspec.json.encode(value).decode()
    check_input_size(text)
    check_run_input(spec, msgspec.json.decode(text))  # as it is stored: plain JSON
    return text


def check_input_size(text: str) -> None:
    """Refuse a run input's JSON ``text`` over a job payload's bound: it is stored and sent the same way.

    Raises:
        RunInputError: naming ``input`` and the bound.
    """
    size = len(text.encode())
    if size > MAX_PAYLOAD_BYTES:
        raise RunInputError("input", f"must be at most {MAX_PAYLOAD_BYTES} bytes as JSON, got {size}")
