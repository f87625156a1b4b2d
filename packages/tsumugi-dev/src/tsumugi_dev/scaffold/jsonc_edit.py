"""Add an item to a list or a member to an object in JSONC text, keeping everything else byte for byte.

A wrangler.jsonc is the user's file: comments, layout and trailing commas stay as written. ``locate`` parses
the text into nodes that know their offsets (comments skipped); ``append`` inserts new text after a
container's last item, in the container's own style (one line or one item a line, trailing comma or not). The
caller re-parses the result and compares it with what it meant to write (`checked_append`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import msgspec

from tsumugi_dev.jsonc import loads_jsonc

__all__ = ["JsoncEditError", "JsoncNode", "append", "checked_append", "locate"]

_PUNCTUATION: Final = "{}[]:,"


class JsoncEditError(ValueError):
    """The text is not JSONC of the expected shape, or an edit did not give the value meant."""


class JsoncNode(msgspec.Struct, kw_only=True):
    """A value in the text: ``start``/``end`` offsets (end exclusive); objects and arrays have children."""

    kind: str  # "object", "array" or "scalar"
    start: int
    end: int
    items: list[JsoncNode] = []
    """Array items, or object members' values."""
    keys: list[str] = []
    """Object member keys, in order (parallel to ``items``)."""
    key_starts: list[int] = []
    """Where each object member's key starts."""

    def member(self, key: str) -> JsoncNode | None:
        """The value of member ``key`` of an object (the last one when repeated, as JSON parsers do)."""
        found = [node for name, node in zip(self.keys, self.items, strict=True) if name == key]
        return found[-1] if found else None


def _skip_string(text: str, start: int) -> int:
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
        elif text[index] == '"':
            return index + 1
        else:
            index += 1
    raise JsoncEditError(f"unterminated string at offset {start}")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    """Significant tokens ``(kind, start, end)``: punctuation, strings, other literals; no comments."""
    out: list[tuple[str, int, int]] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char in " \t\r\n\ufeff":
            index += 1
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            if close < 0:
                raise JsoncEditError(f"unterminated comment at offset {index}")
            index = close + 2
        elif char == '"':
            end = _skip_string(text, index)
            out.append(("string", index, end))
            index = end
        elif char in _PUNCTUATION:
            out.append((char, index, index + 1))
            index += 1
        else:
            end = index
            while end < len(text) and text[end] not in _PUNCTUATION + ' \t\r\n"/':
                end += 1
            out.append(("literal", index, end))
            index = end
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def _peek(self) -> tuple[str, int, int]:
        if self.at >= len(self.tokens):
            raise JsoncEditError("unexpected end of text")
        return self.tokens[self.at]

    def _take(self, kind: str) -> tuple[str, int, int]:
        token = self._peek()
        if token[0] != kind:
            raise JsoncEditError(f"expected {kind!r} at offset {token[1]}, found {token[0]!r}")
        self.at += 1
        return token

    def value(self) -> JsoncNode:
        kind, start, end = self._peek()
        if kind in ("string", "literal"):
            self.at += 1
            return JsoncNode(kind="scalar", start=start, end=end)
        if kind == "[":
            return self._container("array", "]")
        if kind == "{":
            return self._container("object", "}")
        raise JsoncEditError(f"unexpected {kind!r} at offset {start}")

    def _container(self, kind: str, close: str) -> JsoncNode:
        start = self._take("[" if kind == "array" else "{")[1]
        node = JsoncNode(kind=kind, start=start, end=start)
        while self._peek()[0] != close:
            if kind == "object":
                _, key_start, key_end = self._take("string")
                node.keys.append(str(loads_jsonc(self.text[key_start:key_end])))
                node.key_starts.append(key_start)
                self._take(":")
            node.items.append(self.value())
            if self._peek()[0] != ",":
                break
            self.at += 1
        node.end = self._take(close)[2]
        return node

    def document(self) -> JsoncNode:
        root = self.value()
        if self.at != len(self.tokens):
            raise JsoncEditError(f"unexpected text after the value at offset {self.tokens[self.at][1]}")
        return root


def locate(text: str) -> JsoncNode:
    """The parsed tree of ``text`` with offsets.

    Raises:
        JsoncEditError: ``text`` is not JSONC.
    """
    return _Parser(text).document()


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _indent_at(text: str, index: int) -> str:
    start = _line_start(text, index)
    line = text[start:index]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _end_of_line_after(text: str, index: int) -> int:
    """Where the line of ``index`` ends, if only blanks or a comment follow ``index`` on it; else ``index``."""
    newline = text.find("\n", index)
    newline = len(text) if newline < 0 else newline
    rest = text[index:newline].strip()
    if not rest or rest.startswith("//") or (rest.startswith("/*") and rest.endswith("*/")):
        return newline
    return index


def append(text: str, container: JsoncNode, item: str) -> str:
    """``text`` with ``item`` (already JSONC text: a value, or ``"key": value``) after ``container``'s last item."""
    if container.kind == "scalar":
        raise JsoncEditError("cannot append to a scalar")
    close = container.end - 1
    if not container.items:
        inner = text[container.start + 1 : close]
        if "\n" not in inner:
            return text[: container.start + 1] + item + text[container.start + 1 :]
        indent = _indent_at(text, close) + "  "
        return text[: container.start + 1] + "\n" + indent + item + "," + text[container.start + 1 :]
    last = container.items[-1]
    first_of_last = container.key_starts[-1] if container.kind == "object" else last.start
    between = _tokens(text[last.end : close])
    trailing = bool(between) and between[0][0] == ","
    anchor = last.end + between[0][2] if trailing else last.end
    if "\n" not in text[last.end : close]:
        # One line: [a, b] -> [a, b, c]; [a, b,] -> [a, b, c,].
        addition = (" " if trailing else ", ") + item + ("," if trailing else "")
        return text[:anchor] + addition + text[anchor:]
    indent = _indent_at(text, first_of_last)
    eol = _end_of_line_after(text, anchor)
    line = "\n" + indent + item + ("," if trailing else "")
    if trailing:
        return text[:eol] + line + text[eol:]
    # No trailing comma: the last item gets one (before any comment on its line), the new one none.
    return text[:anchor] + "," + text[anchor:eol] + line + text[eol:]


def checked_append(
    text: str, container: JsoncNode, item: str, expect: Callable[[Any], None], where: str
) -> str:
    """`append`, then re-parse and let ``expect(parsed)`` raise if the result is not what was meant.

    Raises:
        JsoncEditError: The edited text does not parse, or ``expect`` refused it; ``where`` names the file.
    """
    edited = append(text, container, item)
    try:
        parsed = loads_jsonc(edited)
    except ValueError as exc:
        raise JsoncEditError(f"{where}: the edit would break the file ({exc}); nothing written") from None
    expect(parsed)
    return edited
