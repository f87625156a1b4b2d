"""Insert lines and list items into a Python module's text where its syntax tree says, leaving the rest as is.

The entry modules are the user's: comments and layout stay. ``ast`` finds the place (a list's last item, the
last import); the edit inserts text at that offset in the list's own style (one line or one item a line,
trailing comma or not). Callers re-parse the result to check it.
"""

from __future__ import annotations

import ast
from typing import Final

__all__ = ["PythonEditError", "append_to_list", "insert_line_after", "offset_of", "parse_module"]

_BLANK: Final = " \t\r\n"


class PythonEditError(ValueError):
    """The module does not parse, or does not have the shape an edit needs."""


def parse_module(source: str, where: str) -> ast.Module:
    """``source`` parsed.

    Raises:
        PythonEditError: It is not valid Python; the message names ``where`` and the line.
    """
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise PythonEditError(f"{where}: is not valid Python (line {exc.lineno}: {exc.msg})") from None


def offset_of(source: str, lineno: int, col: int) -> int:
    """The string offset of an ast position (1-based line, UTF-8 byte column)."""
    lines = source.splitlines(keepends=True)
    before = sum(len(line) for line in lines[: lineno - 1])
    line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
    return before + len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def _end(source: str, node: ast.expr | ast.stmt) -> int:
    if node.end_lineno is None or node.end_col_offset is None:
        raise PythonEditError("a node without an end position")
    return offset_of(source, node.end_lineno, node.end_col_offset)


def _gap(text: str) -> tuple[bool, int] | None:
    """In the text between a list's last item and its ``]``: (has a comma, offset just past it).

    None when the gap holds anything but blanks, comments and at most one comma (e.g. a closing paren).
    """
    index, comma, after = 0, False, 0
    while index < len(text):
        char = text[index]
        if char in _BLANK:
            index += 1
        elif char == "#":
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
        elif char == "," and not comma:
            comma, after = True, index + 1
            index += 1
        else:
            return None
    return comma, after


def _end_of_line_after(source: str, index: int) -> int:
    newline = source.find("\n", index)
    newline = len(source) if newline < 0 else newline
    rest = source[index:newline].strip()
    return newline if not rest or rest.startswith("#") else index


def _indent_of_line(source: str, index: int) -> str:
    start = source.rfind("\n", 0, index) + 1
    line = source[start:index]
    return line[: len(line) - len(line.lstrip(" \t"))]


def append_to_list(source: str, node: ast.List | ast.Tuple, item: str, where: str) -> str:
    """``source`` with ``item`` (Python source of one expression) after the last element of ``node``.

    Raises:
        PythonEditError: The list is not written as a plain bracketed list the edit can follow.
    """
    close = _end(source, node) - 1
    if source[close] not in "])":
        raise PythonEditError(f"{where}: line {node.lineno}: expected a list literal ending in ]")
    start = offset_of(source, node.lineno, node.col_offset)
    if not node.elts:
        inner = source[start + 1 : close]
        if inner.strip():
            raise PythonEditError(
                f"{where}: line {node.lineno}: an empty list with comments; add the item by hand"
            )
        return source[: start + 1] + item + source[close:]
    last = node.elts[-1]
    last_end = _end(source, last)
    gap = _gap(source[last_end:close])
    if gap is None:
        raise PythonEditError(
            f"{where}: line {last.lineno}: the list's last item is not followed by just a comma and ]"
        )
    trailing, past_comma = gap
    anchor = last_end + past_comma if trailing else last_end
    if "\n" not in source[last_end:close]:
        addition = (" " if trailing else ", ") + item + ("," if trailing else "")
        return source[:anchor] + addition + source[anchor:]
    indent = _indent_of_line(source, offset_of(source, last.lineno, last.col_offset))
    eol = _end_of_line_after(source, anchor)
    line = "\n" + indent + item + ("," if trailing else "")
    if trailing:
        return source[:eol] + line + source[eol:]
    return source[:anchor] + "," + source[anchor:eol] + line + source[eol:]


def insert_line_after(source: str, node: ast.stmt, line: str) -> str:
    """``source`` with ``line`` as a new line right after the statement ``node`` (at its indentation)."""
    end = _end(source, node)
    newline = source.find("\n", end)
    indent = _indent_of_line(source, offset_of(source, node.lineno, node.col_offset))
    if newline < 0:
        return source + "\n" + indent + line + "\n"
    return source[: newline + 1] + indent + line + "\n" + source[newline + 1 :]
