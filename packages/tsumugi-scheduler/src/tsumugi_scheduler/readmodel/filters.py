"""The WHERE clause shared by job lists and bulk selection: exact matches, states, a created_at range.

Column names come only from this module's whitelist; every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_scheduler.readmodel.d1_port import d1_values

__all__ = ["EXACT_MATCH_COLUMNS", "where_clause"]

EXACT_MATCH_COLUMNS: Final[frozenset[str]] = frozenset(
    {"state", "binding", "id", "unique_key", "concurrency_key"}
)
"""Columns filtered by equality (no prefix or substring search, by design: each has an index)."""


def where_clause(
    exact: Mapping[str, str | None],
    *,
    states: Sequence[str] = (),
    created_from: int | None = None,
    created_to: int | None = None,
    exclude_bindings: Sequence[str] = (),
) -> tuple[str, list[Any]]:
    """`` WHERE ...`` (or ``""``) and its parameters, ANDing every filter that is set.

    Args:
        exact: Column -> required value; None means "any".
        states: Allowed states (any when empty).
        created_from: Inclusive lower bound on ``created_at``.
        created_to: Inclusive upper bound on ``created_at``.
        exclude_bindings: Bindings left out (e.g. the notice bindings).

    Raises:
        ValueError: a column of ``exact`` is not filterable.
    """
    terms: list[str] = []
    params: list[Any] = []
    for column, value in exact.items():
        if column not in EXACT_MATCH_COLUMNS:
            raise InvalidFieldError(
                "filter column", f"must be one of {', '.join(sorted(EXACT_MATCH_COLUMNS))}, got {column!r}"
            )
        if value is not None:
            terms.append(f"{column} = ?")
            params.append(value)
    if states:
        terms.append(f"state IN ({', '.join('?' for _ in states)})")
        params.extend(states)
    if exclude_bindings:
        terms.append(f"binding NOT IN ({', '.join('?' for _ in exclude_bindings)})")
        params.extend(exclude_bindings)
    if created_from is not None:
        terms.append("created_at >= ?")
        params.append(created_from)
    if created_to is not None:
        terms.append("created_at <= ?")
        params.append(created_to)
    return (f" WHERE {' AND '.join(terms)}" if terms else ""), d1_values(params)
