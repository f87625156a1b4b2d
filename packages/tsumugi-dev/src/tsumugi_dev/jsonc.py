"""JSON with comments and trailing commas, the dialect of ``wrangler.jsonc``.

A small scanner instead of a library: it strips ``//`` and ``/* */`` comments and commas that precede ``}`` or
``]``, leaving string contents untouched, then hands the result to the JSON parser.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads_jsonc", "strip_jsonc"]


def _skip_string(text: str, start: int) -> int:
    """Index just past the string literal that opens at ``start``."""
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    raise ValueError(f"unterminated string starting at offset {start}")


def _strip_comments(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            end = _skip_string(text, index)
            out.append(text[index:end])
            index = end
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            if close < 0:
                raise ValueError(f"unterminated comment starting at offset {index}")
            out.append(" ")
            index = close + 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _strip_trailing_commas(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            end = _skip_string(text, index)
            out.append(text[index:end])
            index = end
            continue
        if char == ",":
            ahead = index + 1
            while ahead < len(text) and text[ahead] in " \t\r\n":
                ahead += 1
            if ahead < len(text) and text[ahead] in "}]":
                index += 1
                continue
        out.append(char)
        index += 1
    return "".join(out)


def strip_jsonc(text: str) -> str:
    """Turn JSONC text into plain JSON text."""
    return _strip_trailing_commas(_strip_comments(text))


def loads_jsonc(text: str) -> Any:
    """Parse JSONC text."""
    return json.loads(strip_jsonc(text))
