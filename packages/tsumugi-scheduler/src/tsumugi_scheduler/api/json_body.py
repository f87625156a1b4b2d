"""Request bodies read strictly as JSON: what the parser would silently change is refused instead (ADR-0077).

- invalid UTF-8 is a 400 (it used to become U+FFFD in the stored payload);
- a key given twice in one object is a 400 naming the key (the parser would keep the last one);
- ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON; a number too large for a double (``1e400``) parses as
  infinity and is refused where it lands (a payload: `tsumugi_core.portable`, with its path; an option: as
  not a number);
- nesting deeper than `MAX_BODY_DEPTH` is refused before parsing, so no body reaches the parser's recursion
  limit (a ``RecursionError``, a 500, at about 1,000 levels); the check is linear in the body's length, so
  no body can hold the process (a Worker isolate serves every request of its process in turn).

Example:
    >>> read_json(b'{"a": [1, {"b": null}]}')
    {'a': [1, {'b': None}]}
    >>> read_json(b'{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    tsumugi_scheduler.api.answers.ApiError: 400 a is given twice in one object
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_scheduler.api.answers import ApiError

__all__ = ["MAX_BODY_DEPTH", "read_json"]

MAX_BODY_DEPTH: Final = 100
"""Deepest nesting of arrays and objects in a request body (payloads: 64, tsumugi_core.portable)."""
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
"""A JSON string, or an unclosed one up to the end of the text: every match succeeds where its loop stops (at
a quote, at the end, or at a lone backslash before the end), so no start is ever re-scanned and the check is
linear. A pattern that needs the closing quote fails from every escaped quote of ``"\\"\\"\\"...`` after
scanning to the end: quadratic, 22 s for a 64 KiB body (issue 25)."""
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate: only a pair of them is a character."""


def _refusal(field: str, rule: str) -> ApiError:
    return ApiError(400, {"error": f"{field} {rule}", "field": field, "rule": rule})


def _reject_constant(name: str) -> Any:
    raise InvalidFieldError(name, "is not JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _refusal(key, "is given twice in one object")
            seen.add(key)
    return value


def _depth(text: str) -> int:
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = deepest = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def read_json(raw: bytes | str) -> Any:
    """The body's JSON value.

    Raises:
        ApiError: 400 ``body must be UTF-8 text`` / ``body must be nested at most 100 levels deep`` /
            ``<key> is given twice in one object`` / ``body must be valid JSON`` (with ``line``,
            ``column`` and ``detail`` when the text is not JSON) / ``body must not hold an unpaired surrogate``.
    """
    if isinstance(raw, bytes):
        try:
            text = raw.decode()
        except UnicodeDecodeError as exc:
            raise _refusal("body", f"must be UTF-8 text (invalid byte at offset {exc.start})") from None
    else:
        text = raw
    if text.count("[") + text.count("{") > MAX_BODY_DEPTH and _depth(text) > MAX_BODY_DEPTH:
        raise _refusal("body", f"must be nested at most {MAX_BODY_DEPTH} levels deep (arrays and objects)")
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        # The original's text, plus where it broke (issue 26): a hand-written body is fixed by its place.
        where = {"line": exc.lineno, "column": exc.colno, "detail": exc.msg}
        raise ApiError(400, {"error": "body must be valid JSON", **where}) from None
    except ValueError:
        raise ApiError(400, {"error": "body must be valid JSON"}) from None
    if _SURROGATE_ESCAPE.search(text) is not None and not _encodable(value):
        # "\ud800" alone is valid JSON but no text: it could be neither stored nor answered (a 500 before).
        raise _refusal("body", "must not hold an unpaired surrogate (\\ud800 to \\udfff without its pair)")
    return value


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True
