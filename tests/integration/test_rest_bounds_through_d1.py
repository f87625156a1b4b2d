"""Request bounds clamped to JavaScript's largest exact integer reach D1 as numbers (the live fuzz run).

The REST handlers clamp a huge ``created_from`` / ``created_to`` / ``offset`` to +-(2**53 - 1); Pyodide 0.28
sends an int of that size as a BigInt, which D1 refuses (``D1_TYPE_ERROR``), so the request answered 500. The
schemathesis run against ``tsumugi dev`` found it on ``POST /api/jobs/bulk-cancel``; the in-process API tests
bind to SQLite directly and never cross the FFI, so these go through the whole runtime.
"""

from __future__ import annotations

import pytest

from tests.integration.system_driver import Driver


@pytest.mark.parametrize("route", ["/api/jobs/bulk-cancel", "/api/jobs/bulk-retry"])
async def test_a_bulk_filter_with_huge_bounds_answers(driver: Driver, route: str) -> None:
    body = {"binding": "Hello", "created_from": -2.5e126, "created_to": 2.5e126, "limit": 9007199254740992.0}
    status, answer = await driver.rest("POST", route, body)
    assert (status, answer["failed"]) == (200, [])


@pytest.mark.parametrize(
    "path",
    [
        "/api/jobs?created_from=-1e300&created_to=1e300",
        "/api/jobs?offset=1e300",
        "/api/runs?offset=1e300",
    ],
)
async def test_a_list_with_huge_bounds_answers(driver: Driver, path: str) -> None:
    status, answer = await driver.rest("GET", path)
    assert status == 200, answer
    assert answer["total"] == 0
