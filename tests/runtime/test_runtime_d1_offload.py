"""Under the real clock each D1 database works on a thread of its own, as D1 works beside a Worker on Cloudflare."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tsumugi_dev.clock import RealClock, VirtualClock
from tsumugi_dev.d1 import D1Database, D1Error
from tsumugi_dev.runtime import LocalRuntime

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CONFIGS = [FIXTURES / "conformance" / "wrangler.jsonc", FIXTURES / "peer" / "wrangler.toml"]


@pytest.fixture
async def offloaded(tmp_path: Path) -> AsyncIterator[D1Database]:
    with D1Database(tmp_path / "db.sqlite", name="db", offload=True) as db:
        await db.exec("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL)")
        yield db


async def test_an_offloaded_database_works_off_the_loop_thread_with_the_same_answers(
    offloaded: D1Database,
) -> None:
    loop_thread = threading.get_ident()
    assert await offloaded.call(threading.get_ident) != loop_thread
    insert = offloaded.prepare("INSERT INTO item (name) VALUES (?)")
    assert [r.meta.changes for r in await offloaded.batch([insert.bind("a"), insert.bind("b")])] == [1, 1]
    assert await offloaded.prepare("SELECT count(*) AS n FROM item").first("n") == 2
    assert await offloaded.prepare("SELECT name FROM item ORDER BY id").raw() == [["a"], ["b"]]
    assert (await offloaded.prepare("SELECT id FROM item WHERE name = ?").bind("b").all()).results == [
        {"id": 2}
    ]


async def test_an_offloaded_batch_still_rolls_back_as_a_whole_and_raises_d1_errors(
    offloaded: D1Database,
) -> None:
    insert = offloaded.prepare("INSERT INTO item (name) VALUES (?)")
    await insert.bind("x").run()
    with pytest.raises(D1Error, match="UNIQUE constraint failed"):
        await offloaded.batch([insert.bind("y"), insert.bind("x")])
    with pytest.raises(D1Error, match="no such table"):
        await offloaded.prepare("SELECT * FROM missing_table").all()
    assert await offloaded.prepare("SELECT name FROM item").raw() == [["x"]]


async def test_offloaded_calls_apply_in_the_order_they_were_made_and_close_waits_for_them(
    tmp_path: Path,
) -> None:
    db = D1Database(tmp_path / "order.sqlite", name="order", offload=True)
    await db.exec("CREATE TABLE log (n INTEGER NOT NULL)")
    insert = db.prepare("INSERT INTO log (n) VALUES (?)")
    pending = [asyncio.ensure_future(insert.bind(n).run()) for n in range(50)]
    await asyncio.gather(*pending)
    last = asyncio.ensure_future(insert.bind(50).run())
    await asyncio.sleep(0)  # submitted to the database's thread
    db.close()  # returns once the call under way is stored
    await last
    with D1Database(tmp_path / "order.sqlite", name="order") as reopened:
        assert await reopened.prepare("SELECT n FROM log ORDER BY rowid").raw() == [[n] for n in range(51)]


@pytest.mark.parametrize(("clock", "offload"), [(VirtualClock, False), (RealClock, True)])
async def test_the_runtime_offloads_d1_only_under_the_real_clock(
    tmp_path: Path, clock: type[VirtualClock] | type[RealClock], offload: bool
) -> None:
    runtime = LocalRuntime(CONFIGS, data_dir=tmp_path / "data", clock=clock())
    await runtime.start()
    try:
        db = runtime.d1("conformance-db")
        assert (await db.call(threading.get_ident) != threading.get_ident()) is offload
    finally:
        await runtime.stop()
