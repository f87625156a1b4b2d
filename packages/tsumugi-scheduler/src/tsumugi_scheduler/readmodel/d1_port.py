"""The slice of Cloudflare's D1 API the read model uses, as Protocols.

Only the SDK's shape is used (``prepare(sql).bind(*values)`` then ``all()`` / ``first()`` / ``run()``, and
``batch([...])`` as one transaction), so the same code runs on Cloudflare's ``env.DB`` and on the local
runtime's emulation. Results are read as mappings: the Workers SDK hands back ``JsDict`` (a ``dict``).

``D1Like`` is generic in its statement type because ``batch`` takes back the statements ``prepare`` made:
a database only promises to run its own statements.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

__all__ = ["D1Like", "D1StatementLike", "StatementT", "d1_values", "result_changes", "result_rows"]


class D1StatementLike(Protocol):
    """A prepared D1 statement."""

    def bind(self, *values: Any) -> Self:
        """A copy of the statement with positional ``?`` values bound."""
        ...

    def all(self) -> Awaitable[Any]:
        """Every row: a mapping with ``results`` (row mappings), ``success`` and ``meta``."""
        ...

    def first(self) -> Awaitable[Any]:
        """The first row as a mapping, or None."""
        ...

    def run(self) -> Awaitable[Any]:
        """Run for effect; the same shape as ``all()`` (``meta.changes`` counts changed rows)."""
        ...


StatementT = TypeVar("StatementT", bound=D1StatementLike)
"""The statement type of one D1 database."""


class D1Like(Protocol[StatementT]):
    """A D1 database binding."""

    def prepare(self, query: str, /) -> StatementT:
        """A statement for ``query``."""
        ...

    def batch(self, statements: list[StatementT], /) -> Awaitable[Sequence[Any]]:
        """Run ``statements`` as one transaction; one result per statement, in order."""
        ...


_NUMBER_BOUND = 2**53 - 1
"""Pyodide 0.28 sends an int of this size or more as a JS BigInt, which D1 refuses (``D1_TYPE_ERROR``); the
request parameters are clamped to exactly this bound (JavaScript's largest exact integer)."""


def d1_values(values: Sequence[Any]) -> list[Any]:
    """``values`` to bind, an int of exactly +-(2**53 - 1) as the float it equals (D1 binds every number as a
    double); other values unchanged (a larger int is still refused: nothing clamps to it)."""
    return [float(v) if type(v) is int and abs(v) == _NUMBER_BOUND else v for v in values]


def result_rows(result: Any) -> list[Mapping[str, Any]]:
    """The rows of an ``all()`` / ``run()`` / ``batch`` result."""
    rows: list[Mapping[str, Any]] = list(result["results"])
    return rows


def result_changes(result: Any) -> int:
    """How many rows a statement of ``run()`` / ``batch`` changed (``meta.changes``)."""
    return int(result["meta"]["changes"])
