"""Cloudflare's prices applied to metered usage: dollars per unit on Workers Paid (ADR-0130).

The prices, allowances, their source pages and the date they were read are data, in ``cloudflare_prices.json``
beside this module; this module only multiplies. Per-job dollars are marginal: beyond the monthly allowances,
without the plan's $5 minimum.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["BilledUnits", "account_kind", "billed_units", "prices", "sum_units", "usd"]

BilledUnits = dict[str, float]
"""Billable units by the price file's names (``worker_requests``, ``do_requests``, ``do_gb_s``, ...)."""


@cache
def prices() -> Mapping[str, Any]:
    """The price file, parsed (``units``, ``limits``, ``read_on``, ...)."""
    text = resources.files("tsumugi_dev").joinpath("cloudflare_prices.json").read_text(encoding="utf-8")
    return json.loads(text)


def billed_units(usage: Mapping[str, float], kind: str) -> BilledUnits:
    """Billable units of one account's counters (``Usage.as_dict``); ``kind`` is its account prefix.

    A Worker bills its ``requests``; a Durable Object class its ``requests``, ``active_s`` (as GB-s at 128 MB)
    and SQL rows; a queue its operations; a D1 database its rows; an Analytics Engine dataset its points.
    """
    get = usage.get
    if kind == "Worker":
        return {"worker_requests": get("requests", 0)}
    if kind == "Durable Object":
        gb = float(prices()["units"]["do_gb_s"]["gb_per_object"])
        return {
            "do_requests": get("requests", 0),
            "do_gb_s": get("active_s", 0) * gb,
            "do_rows_read": get("sql_rows_read", 0),
            "do_rows_written": get("sql_rows_written", 0),
        }
    if kind == "Queue":
        return {"queue_operations": get("queue_writes", 0) + get("queue_reads", 0) + get("queue_deletes", 0)}
    if kind == "D1":
        return {"d1_rows_read": get("d1_rows_read", 0), "d1_rows_written": get("d1_rows_written", 0)}
    if kind == "Analytics Engine":
        return {"analytics_points": get("analytics_points", 0)}
    raise ValueError(f"kind: unknown account kind {kind!r}")


def account_kind(account: str) -> str:
    """The kind of a `Meter` account name (``"Durable Object a:B"`` -> ``"Durable Object"``)."""
    for kind in ("Durable Object", "Analytics Engine", "Worker", "Queue", "D1"):
        if account.startswith(kind + " "):
            return kind
    raise ValueError(f"account: {account!r} names no known kind")


def sum_units(snapshot: Mapping[str, Mapping[str, float]]) -> BilledUnits:
    """Billable units of a whole `Meter.snapshot`, summed over its accounts."""
    total: BilledUnits = {}
    for account, usage in snapshot.items():
        for unit, amount in billed_units(usage, account_kind(account)).items():
            total[unit] = total.get(unit, 0.0) + amount
    return total


def usd(units: Mapping[str, float]) -> float:
    """Dollars for ``units`` at the marginal price of each."""
    table = prices()["units"]
    return sum(amount * float(table[unit]["usd_per_million"]) / 1_000_000 for unit, amount in units.items())
