"""Sizes of queue messages as Cloudflare Queues counts them, for staying inside its limits (ADR-0106).

workerd serialises a message body as JSON: with the compatibility flag ``queues_json_messages`` (on by default
from the compatibility date 2024-03-18) ``send`` and ``sendBatch`` write ``JSON.stringify(body)`` of the body as
the SDK hands it to JavaScript, as UTF-8 (``src/workerd/api/queue.c++``, ``serialize``). A message may take
128,000 bytes, one ``sendBatch`` 256,000 bytes together and 100 messages, "1 KB" being 1000 bytes; a message may
carry up to ~100 bytes of metadata that count too (developers.cloudflare.com/queues/platform/limits/).

JavaScript's JSON differs from msgspec's only in numbers: a Python ``float`` becomes a JavaScript number, which
``JSON.stringify`` writes without a fraction when it is integral (``1.0`` -> ``1``, ``-0.0`` -> ``0``) and in
exponent form only from 1e21 and below 1e-6 (``1e20`` -> ``100000000000000000000``). Text is escaped the same
way by both (the quote, the backslash and controls; nothing else), so strings, integers, ``None`` and booleans
measure alike. Two measures:

- `json_bytes`: the size itself: msgspec's length plus what each float takes more or less in JavaScript;
- `json_bound`: a cheap upper bound from msgspec's length alone (one C call): JavaScript never writes more than
  `JS_PER_JSON_BYTE` bytes per byte of msgspec's JSON (a bare ``1e20``: 4 bytes, 21 in JavaScript).

Example:
    >>> json_bytes({"name": "Ada", "score": 1e20}), json_bytes([0.5] * 3), js_number(1.0)
    (44, 13, '1')
"""

from __future__ import annotations

import math
from typing import Any, Final

import msgspec

from tsumugi_core.exceptions import InvalidTypeError

__all__ = [
    "JS_PER_JSON_BYTE",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_MESSAGES",
    "MAX_MESSAGE_BYTES",
    "js_number",
    "json_bound",
    "json_bytes",
]

MAX_MESSAGE_BYTES: Final = 128_000
"""Largest message body, as UTF-8 JSON."""
MAX_BATCH_BYTES: Final = 256_000
"""Largest ``sendBatch``: every body together, as UTF-8 JSON."""
MAX_BATCH_MESSAGES: Final = 100
"""Most messages per ``sendBatch``."""
JS_PER_JSON_BYTE: Final = 6
"""JavaScript JSON bytes per byte of msgspec's JSON of the same value, at most (21 / 4, rounded up)."""
_FIXED_DIGITS: Final = 21
"""``Number.prototype.toString`` writes a number below 1e21 without an exponent (ECMA-262 Number::toString)."""
_SMALL_EXPONENT: Final = -6
"""... and one from 1e-6 up likewise; below it, in exponent form."""


def js_number(value: float) -> str:
    """``JSON.stringify`` of the JavaScript number ``value`` becomes (``null`` when it is not finite).

    The digits are Python's shortest round trip (``repr``), which are JavaScript's too; only the layout differs.
    """
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    mantissa, _, exponent_text = repr(value).partition("e")
    whole, _, fraction = mantissa.partition(".")
    exponent = int(exponent_text or 0)
    # The value is 0.<digits> x 10^n.
    n = len(whole) + exponent if whole != "0" else exponent - (len(fraction) - len(fraction.lstrip("0")))
    digits = (whole + fraction).strip("0")
    k = len(digits)
    if k <= n <= _FIXED_DIGITS:
        return digits + "0" * (n - k)
    if 0 < n <= _FIXED_DIGITS:
        return f"{digits[:n]}.{digits[n:]}"
    if _SMALL_EXPONENT < n <= 0:
        return "0." + "0" * -n + digits
    power = f"e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return (digits if k == 1 else f"{digits[0]}.{digits[1:]}") + power


def _float_excess(value: Any) -> int:
    """What the floats in ``value`` take in JavaScript's JSON beyond (or short of) msgspec's."""
    if isinstance(value, str | int) or value is None:  # bool is an int
        return 0
    if isinstance(value, float):
        return len(js_number(value)) - len(msgspec.json.encode(value))
    if isinstance(value, dict):
        members: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return sum(_float_excess(member) for member in members.values())
    if isinstance(value, list | tuple):
        items: list[Any] = list(value)  # pyright: ignore[reportUnknownArgumentType]
        return sum(_float_excess(item) for item in items)
    raise InvalidTypeError(
        "value",
        f"is not a JSON value: {type(value).__name__}",
        message=f"not a JSON value: {type(value).__name__}",
    )  # msgspec writes sets, bytes, ...; JavaScript not


def json_bound(json_length: int) -> int:
    """At least the queue size of a body whose msgspec JSON is ``json_length`` bytes long."""
    return json_length * JS_PER_JSON_BYTE


def json_bytes(value: Any) -> int:
    """The size of the JSON-like ``value`` as a queue message: UTF-8 bytes of JavaScript's ``JSON.stringify``.

    Raises:
        TypeError: ``value`` is not made of None, bool, int, float, str, list, tuple and dict.
    """
    excess = _float_excess(value)
    try:
        return len(msgspec.json.encode(value)) + excess
    except (TypeError, ValueError) as exc:  # a key msgspec cannot write, a lone surrogate
        raise InvalidTypeError(
            "value", f"is not a JSON value: {exc}", message=f"not a JSON value: {exc}"
        ) from None
