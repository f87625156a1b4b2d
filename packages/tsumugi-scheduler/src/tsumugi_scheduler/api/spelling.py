"""Option names in camelCase (the original's) or snake_case, and errors that name them as the request did.

A body may spell each option either way (``maxAttempts`` or ``max_attempts``); `Spelling.read` renames the
keys to the spelling the handler works in and remembers what was sent, refusing a body that sends both
spellings of one option. `Spelling.error` rewrites a refusal so every option it names is spelled as the
request spelled it (``"max_attempts": 0`` -> ``max_attempts must be at least 1``; ``"maxAttempts": 0`` ->
``maxAttempts must be at least 1``); an option the request did not send is named in the request's style.
Keys that are not options (payload contents, unknown keys) are never renamed.

Example:
    >>> spelling = Spelling(style="camel", known={"maxAttempts", "runAt"})
    >>> spelling.read({"max_attempts": 0, "payload": {"a_b": 1}})
    {'maxAttempts': 0, 'payload': {'a_b': 1}}
    >>> spelling.name("maxAttempts"), spelling.name("runAt")
    ('max_attempts', 'run_at')
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

from tsumugi_core.near_names import did_you_mean
from tsumugi_scheduler.api.answers import ApiError

__all__ = ["Spelling", "camel_case", "snake_case"]

_UPPER: Final = re.compile(r"(?<=[a-z0-9])([A-Z])")
_WORD: Final = re.compile(r"\b[a-z][a-z0-9]*(?:(?:_[a-z0-9]+)+|(?:[A-Z][a-z0-9]*)+)\b")
"""A compound option name in a message, either spelling (``max_attempts``, ``maxAttempts``)."""
_ITEM: Final = re.compile(r"items\[\d+\]\.")


def snake_case(name: str) -> str:
    """``maxAttempts`` -> ``max_attempts`` (a snake_case name is unchanged)."""
    return _UPPER.sub(r"_\1", name).lower() if not name.islower() else name


def camel_case(name: str) -> str:
    """``max_attempts`` -> ``maxAttempts`` (a camelCase name is unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _split(field: str) -> tuple[str, str]:
    match = _ITEM.match(field)
    return (match[0], field[match.end() :]) if match else ("", field)


def _is_payload(path: str) -> bool:
    return path == "payload" or path.startswith(("payload.", "payload["))


class Spelling:
    """How one request (or one item of a bulk body) spelled its option names."""

    def __init__(self, *, style: Literal["camel", "snake"], known: Collection[str]) -> None:
        """Rename to ``style``; ``known`` are the option names in that style (others are kept as sent)."""
        self._canonical = camel_case if style == "camel" else snake_case
        self._other = snake_case if style == "camel" else camel_case
        self._known = known
        self._sent: dict[str, str] = {}
        self._renamed = False

    def read(self, body: Mapping[str, Any], where: str = "", prefix: str = "") -> dict[str, Any]:
        """``body`` with its option keys in the handler's spelling.

        Args:
            body: A JSON object of the request.
            where: The refusal's field prefix (``items[3].``).
            prefix: The object's own path among the options (``backoff.`` for a nested object).

        Raises:
            ApiError: 400 when one option is sent in both spellings.
        """
        renamed: dict[str, Any] = {}
        for key, value in body.items():
            name = self._canonical(key)
            if f"{prefix}{name}" not in self._known:
                name = key
            if name in renamed:
                field, rule = (
                    f"{where}{prefix}{key}",
                    f"and {prefix}{self._sent[prefix + name]} are one option: send it once",
                )
                raise ApiError(400, {"error": f"{field} {rule}", "field": field, "rule": rule})
            renamed[name] = value
            self._sent[f"{prefix}{name}"] = key
            # An unknown key is named as sent too, whichever spelling a later message uses for it.
            self._sent.setdefault(f"{prefix}{self._canonical(key)}", key)
            self._renamed = self._renamed or name != key
        return renamed

    def name(self, option: str) -> str:
        """``option`` (either spelling, dotted for nested options) as this request spells it."""
        parts = option.split(".")
        spelled: list[str] = []
        for depth in range(len(parts)):
            path = ".".join([*parts[:depth], self._canonical(parts[depth])])
            sent = self._sent.get(path)
            if sent is None:  # not sent: in the style the request used
                sent = (self._other if self._renamed else self._canonical)(parts[depth])
            spelled.append(sent)
        return ".".join(spelled)

    def field(self, field: str) -> str:
        """A refusal's field (``items[2].backoff.delay_ms``) with its option names spelled as sent."""
        where, path = _split(field)
        if _is_payload(path):
            return field  # a payload's keys are the caller's data, not options
        return where + self.name(path)

    def _suggestion(self, sent: str) -> str:
        """`` (did you mean max_attempts?)``: the nearest known option, in the spelling ``sent`` used."""
        style = snake_case if "_" in sent or sent.islower() else camel_case
        return did_you_mean(sent, {style(name) for name in self._known if "." not in name})

    def words(self, text: str) -> str:
        """Option names inside a message, spelled as sent."""
        return _WORD.sub(lambda m: self.name(m[0]) if self._canonical(m[0]) in self._known else m[0], text)

    def error(self, error: ApiError) -> ApiError:
        """``error`` with every option name it gives spelled as the request spelled it."""
        body = dict(error.body)
        field = body.get("field")
        if not isinstance(field, str):
            if isinstance(body.get("error"), str):
                body["error"] = self.words(body["error"])
            return ApiError(error.status, body)
        spelled = self.field(field)
        if not _is_payload(_split(field)[1]) and isinstance(body.get("rule"), str):
            body["rule"] = self.words(body["rule"])
            if body["rule"].startswith("is not an enqueue option"):
                body["rule"] += self._suggestion(_split(spelled)[1])
        body["field"] = spelled
        if isinstance(body.get("rule"), str):
            body["error"] = f"{spelled} {body['rule']}"
        return ApiError(error.status, body)
