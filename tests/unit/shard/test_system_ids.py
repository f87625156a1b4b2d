"""The scheduler's system ids: one read of the OS's entropy serves `IDS_PER_READ` ids, none repeats."""

from __future__ import annotations

import secrets

import pytest

from tsumugi_core.ids import LOCAL_ID_ENTROPY_BYTES, is_valid_local_id, new_local_id
from tsumugi_scheduler import timing
from tsumugi_scheduler.timing import IDS_PER_READ, SystemIds


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every block of entropy SystemIds reads, in order (counting bytes, so each block is distinct)."""
    taken: list[bytes] = []

    def token_bytes(count: int) -> bytes:
        block = bytes((len(taken) * 7 + i) % 256 for i in range(count))
        taken.append(block)
        return block

    monkeypatch.setattr(secrets, "token_bytes", token_bytes)
    return taken


def test_one_read_serves_a_block_of_ids_each_from_its_own_bytes(reads: list[bytes]) -> None:
    ids = SystemIds()
    drawn = [ids.new_local_id() for _ in range(IDS_PER_READ + 1)]
    assert [len(block) for block in reads] == [LOCAL_ID_ENTROPY_BYTES * IDS_PER_READ] * 2
    size = LOCAL_ID_ENTROPY_BYTES
    expected = [new_local_id(reads[0][i * size : (i + 1) * size]) for i in range(IDS_PER_READ)]
    assert drawn == [*expected, new_local_id(reads[1][:size])]
    assert all(is_valid_local_id(i) for i in drawn)


def test_a_forked_child_reads_afresh_instead_of_repeating_the_parents_pool(reads: list[bytes]) -> None:
    ids = SystemIds()
    ids.new_local_id()
    timing._forked()  # pyright: ignore[reportPrivateUsage]  # what os.register_at_fork runs in a child
    after = ids.new_local_id()
    assert len(reads) == 2
    assert after == new_local_id(reads[1][:LOCAL_ID_ENTROPY_BYTES])


def test_real_entropy_gives_distinct_ids() -> None:
    ids = SystemIds()
    drawn = [ids.new_local_id() for _ in range(3 * IDS_PER_READ)]
    assert len(set(drawn)) == len(drawn)
    assert all(is_valid_local_id(i) for i in drawn)
