"""Which JSON values can cross every hop a payload makes: queue message, RPC, JSON text, JavaScript readers.

A payload is stored as JSON text, sent in a queue message (as JSON, ADR-0106), handed to the performer over
RPC and read back by the dashboard (JavaScript's ``JSON.parse``). What survives all of them (ADR-0077):

- integers within ``±(2**53 - 1)``: Pyodide turns a larger Python ``int`` into a JS ``BigInt``, which
  ``JSON.stringify`` refuses and every JavaScript reader would round; msgspec's JSON and the local queue
  refuse anything beyond 64 bits, so one such value used to fail a whole dispatch batch (issue 15 item 4);
- finite floats only: JSON has no NaN or Infinity (``1e400`` parses as infinity and was stored as ``null``);
- object keys that are strings;
- nesting at most `MAX_NESTING` levels: deep values cost a frame per level in every copy on the way.

`check_portable` walks the value once and raises `InvalidValueError` at the first value that breaks a rule,
with its path. Values that are not plain JSON types (a Struct, a datetime) are checked as msgspec would
encode them.

Example:
    >>> check_portable({"n": [1, 2.5, "x", None, True]})
    >>> try:
    ...     check_portable({"n": [1, 2**64]})
    ... except InvalidValueError as error:
    ...     print(error.path("payload"), error.rule)
    payload.n[1] must be an integer between -9007199254740991 and 9007199254740991 (JavaScript's safe integers), got 18446744073709551616
"""

from __future__ import annotations

import math
from typing import Any, Final, TypeGuard, cast

import msgspec

from tsumugi_core.exceptions import InvalidTypeError, TsumugiError
from tsumugi_core.json_path import InvalidValueError

__all__ = ["MAX_NESTING", "MAX_SAFE_INTEGER", "check_portable", "is_finite_number", "shown_number"]

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Integers cross JavaScript as doubles; anything larger would silently lose precision (or be a BigInt)."""
MAX_NESTING: Final = 64
"""Deepest nesting of arrays and objects in a payload (``{"a": [1]}`` is 2 levels)."""

_INT_RULE: Final = f"must be an integer between -{MAX_SAFE_INTEGER} and {MAX_SAFE_INTEGER} (JavaScript's safe integers), got "
_NESTING_RULE: Final = f"must be nested at most {MAX_NESTING} levels deep (arrays and objects)"


class _NotPlainError(TsumugiError):
    """A value of a type JSON does not have: check its msgspec encoding instead."""


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an ``int`` or a finite ``float`` (not a ``bool``).

    An ``int`` is finite however large: ``math.isfinite`` would convert one beyond a float's range first and
    raise ``OverflowError`` (``10**400`` in a JSON body), so ranges are checked on the ``int`` itself.
    """
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def shown_number(value: int | float) -> str:
    """``value`` as an error message shows it: an integer of over 100 digits by its size alone.

    ``str()`` of an integer of over 4,300 digits raises ``ValueError`` in CPython, which would replace the
    message naming the rule.
    """
    if isinstance(value, int) and abs(value) >= 10**100:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    return repr(value)


def _walk(value: Any, depth: int) -> None:
    kind: type = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind is str or kind is bool or value is None:
        return
    if kind is int:
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return
        raise InvalidValueError(f"{_INT_RULE}{shown_number(value)}")
    if kind is float:
        if math.isfinite(value):
            return
        raise InvalidValueError(f"must be a finite number, got {value}")
    if kind is dict or kind is list or kind is tuple:
        if depth >= MAX_NESTING:
            raise InvalidValueError(_NESTING_RULE)
        if kind is dict:
            _walk_object(cast(dict[Any, Any], value), depth + 1)
        else:
            _walk_array(cast(list[Any], value), depth + 1)
        return
    raise _NotPlainError


def _walk_object(value: dict[Any, Any], depth: int) -> None:
    for key, item in value.items():
        if type(key) is not str:
            raise InvalidValueError(f"must have string keys, got {type(key).__name__} {key!r}")
        kind: type = type(item)  # pyright: ignore[reportUnknownVariableType]
        if (
            kind is str
            or kind is bool
            or item is None
            or (kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER)
        ):
            continue  # the common leaves, without a call each
        try:
            _walk(item, depth)
        except InvalidValueError as error:
            raise error.inside(key) from None


def _walk_array(value: list[Any] | tuple[Any, ...], depth: int) -> None:
    for index, item in enumerate(value):
        kind: type = type(item)  # pyright: ignore[reportUnknownVariableType]
        if (
            kind is str
            or kind is bool
            or item is None
            or (kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER)
        ):
            continue
        try:
            _walk(item, depth)
        except InvalidValueError as error:
            raise error.inside(index) from None


def check_portable(value: Any) -> None:
    """Refuse a value that cannot cross a queue, an RPC and JavaScript's JSON intact.

    Raises:
        InvalidValueError: the first offending value, with its path and the rule.
        TypeError: ``value`` holds something msgspec cannot encode as JSON.
    """
    try:
        _walk(value, 0)
    except _NotPlainError:
        # A Struct, dataclass, datetime, enum member...: check what its JSON would hold. Floats are kept as
        # floats (msgspec would write a non-finite one as null).
        try:
            _walk(msgspec.to_builtins(value), 0)
        except _NotPlainError:
            raise InvalidTypeError(
                "value",
                f"is not a JSON value: {type(value).__name__}",
                message=f"not a JSON value: {type(value).__name__}",
            ) from None
