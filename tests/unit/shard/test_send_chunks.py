"""``sendBatch`` chunks inside Cloudflare's limits (ADR-0044, sizes as JSON: ADR-0106) and the points budget of one
alarm (ADR-0045)."""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.queue_size import MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, MAX_MESSAGE_BYTES, json_bytes
from tsumugi_scheduler.shard_host import SEND_BATCH_BYTES, send_chunks


def _body(name: str, payload: Any) -> dict[str, Any]:
    return {
        "body": {
            "jobId": f"Hello#0:{name}",
            "binding": "Hello",
            "attempt": 1,
            "timeoutMs": 60_000,
            "claimRequired": False,
            "payload": payload,
            "maxAttempts": 3,
        }
    }


def _real_sizes(chunk: list[dict[str, Any]]) -> int:
    return sum(json_bytes(b["body"]) for b in chunk)


def test_small_bodies_go_in_chunks_of_100() -> None:
    bodies = [_body(str(i), {"n": i}) for i in range(250)]
    chunks = send_chunks(bodies)
    assert [len(c) for c in chunks] == [100, 100, 50]
    assert [b for c in chunks for b in c] == bodies


def test_big_bodies_are_split_by_bytes_and_every_chunk_fits() -> None:
    bodies = [_body(str(i), {"text": "x" * (100 * 1024 - 20)}) for i in range(3)]
    bodies += [_body(f"s{i}", {"n": i}) for i in range(150)]
    chunks = send_chunks(bodies)
    assert [b for c in chunks for b in c] == bodies  # order kept
    for chunk in chunks:
        assert len(chunk) <= MAX_BATCH_MESSAGES
        assert len(chunk) == 1 or _real_sizes(chunk) <= SEND_BATCH_BYTES < MAX_BATCH_BYTES
    assert all(json_bytes(b["body"]) <= MAX_MESSAGE_BYTES for b in bodies)


def test_medium_bodies_fill_chunks_by_bytes_before_count() -> None:
    bodies = [_body(str(i), {"text": "y" * 2_600}) for i in range(100)]  # ~270 KB real
    chunks = send_chunks(bodies)
    assert len(chunks) > 1
    assert all(_real_sizes(c) <= SEND_BATCH_BYTES for c in chunks)
    assert sum(len(c) for c in chunks) == 100


def test_the_bound_is_never_below_the_real_size() -> None:
    from tsumugi_core.queue_size import json_bound

    for value in [[], {}, [[]] * 30, [0.5] * 30, [1e20] * 30, "é€" * 100, {"a": [None, True, 2**40, -3]}]:
        assert json_bytes(value) <= json_bound(len(msgspec.json.encode(value)))
