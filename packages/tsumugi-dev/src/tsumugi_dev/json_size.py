"""How many bytes a queue message body takes as Cloudflare measures it: UTF-8 JSON as JavaScript writes it.

With the compatibility flag ``queues_json_messages`` (on by default from the compatibility date 2024-03-18)
workerd serialises a body it was given no ``contentType`` for with ``JSON.stringify`` and sends the text as
UTF-8 (``src/workerd/api/queue.c++``, ``serialize``); the Queues service checks those bytes against its
limits (128,000 a message, 256,000 a ``sendBatch``). A Python Worker's body reaches JavaScript as the SDK
converts it: dicts become objects, lists arrays, ``int`` and ``float`` numbers, ``bytes`` a ``Uint8Array``.

`json_size` computes that length for the values a body can hold after the runtime's copy, JavaScript's rules
included: a number is written in its shortest form (``1e20`` as ``100000000000000000000``, exponents only from
1e21 and below 1e-6; not finite: ``null``), a ``Uint8Array`` as an object of its indices (``{"0":1}``), a
``Date`` as its ISO text, a ``Set``, an ``Error`` and other objects as ``{}``, and a function is left out of
an object (``null`` in an array). It walks the value, so the queue binding only calls it when the msgpack
encoding it already made could be over a limit: `JSON_TO_MSGPACK_MAX_RATIO` bounds how much bigger the JSON
can be (a byte of a ``Uint8Array``: 1 byte in msgpack, up to 13 in JSON, ``"123456":255,``).
"""

from __future__ import annotations

import datetime
import math
from typing import Any, Final, cast

import msgspec

__all__ = ["JSON_TO_MSGPACK_MAX_RATIO", "js_number", "json_size"]

JSON_TO_MSGPACK_MAX_RATIO: Final = 13
"""JSON bytes per msgpack byte at most, for any value `json_size` measures."""
_ISO_DATE: Final = len('"2026-01-01T00:00:00.000Z"')
"""``Date.prototype.toJSON`` of a date within years 0..9999, with its quotes."""


def js_number(value: float) -> str:
    """``JSON.stringify`` of the JavaScript number ``value`` (ECMA-262 Number::toString; not finite: null)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    if value < 0:
        return "-" + js_number(-value)
    mantissa, _, exponent_text = repr(float(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    exponent = int(exponent_text or 0)
    # The value is 0.<digits> x 10^n; Python's shortest round-trip digits are JavaScript's too.
    n = len(whole) + exponent if whole != "0" else exponent - (len(fraction) - len(fraction.lstrip("0")))
    digits = (whole + fraction).strip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return f"{digits[:n]}.{digits[n:]}"
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    power = f"e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return (digits if k == 1 else f"{digits[0]}.{digits[1:]}") + power


def _text(value: str) -> int:
    try:
        return len(msgspec.json.encode(value))  # msgspec escapes exactly what JSON.stringify does
    except UnicodeEncodeError:  # a lone surrogate: JSON.stringify writes it as \udxxx
        return 2 + sum(6 if 0xD800 <= ord(c) <= 0xDFFF else len(msgspec.json.encode(c)) - 2 for c in value)


def _members(items: list[tuple[str, Any]]) -> int:
    kept = [(key, item) for key, item in items if not callable(item)]  # functions are left out of an object
    return 2 + max(len(kept) - 1, 0) + sum(_text(key) + 1 + _value(item) for key, item in kept)


def _value(value: Any) -> int:
    if value is None:
        return 4
    if value is True or value is False:
        return 4 if value else 5
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int):
        return len(str(value)) if abs(value) < 10**21 else len(js_number(float(value)))
    if isinstance(value, float):
        return len(js_number(value))
    if isinstance(value, dict):
        entries = cast(dict[Any, Any], value)
        return _members([(str(key), item) for key, item in entries.items()])
    if isinstance(value, list | tuple):
        elements = cast(list[Any], value)
        return 2 + max(len(elements) - 1, 0) + sum(4 if callable(e) else _value(e) for e in elements)
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(cast(bytes, value))
        return _members([(str(i), byte) for i, byte in enumerate(data)])  # a Uint8Array: {"0":n,...}
    if isinstance(value, datetime.datetime | datetime.date):
        return _ISO_DATE
    return 2  # a Set, an Error, a Request: JSON.stringify writes no own enumerable property, "{}"


def json_size(value: Any) -> int:
    """The length of ``value`` as ``JSON.stringify`` writes it, in UTF-8, as the Queues limits count it."""
    return 4 if callable(value) else _value(value)
