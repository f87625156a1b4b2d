"""``sendBatch`` chunks inside Cloudflare's limits (ADR-0044; messages as JSON text with their exact UTF-8 sizes:
ADR-0166) and the points budget of one alarm (ADR-0045)."""

from __future__ import annotations

from typing import Any

import msgspec

from tsumugi_core.queue_size import (
    MAX_BATCH_BYTES,
    MAX_BATCH_MESSAGES,
    MAX_MESSAGE_BYTES,
    json_bound,
    json_bytes,
)
from tsumugi_scheduler.shard_host import SEND_BATCH_BYTES, send_chunks


def _encoded(name: str, payload: Any) -> bytes:
    return msgspec.json.encode(
        {
            "jobId": f"Hello#0:{name}",
            "binding": "Hello",
            "attempt": 1,
            "timeoutMs": 60_000,
            "claimRequired": False,
            "payload": payload,
            "maxAttempts": 3,
        }
    )


def _real_sizes(chunk: list[dict[str, str]]) -> int:
    return sum(len(m["body"].encode()) for m in chunk)


def test_small_bodies_go_in_chunks_of_100_as_text_messages() -> None:
    encoded = [_encoded(str(i), {"n": i}) for i in range(250)]
    chunks = send_chunks(encoded)
    assert [len(c) for c in chunks] == [100, 100, 50]
    assert [m["body"].encode() for c in chunks for m in c] == encoded
    assert {m["contentType"] for c in chunks for m in c} == {"text"}


def test_big_bodies_are_split_by_bytes_and_every_chunk_fits() -> None:
    encoded = [_encoded(str(i), {"text": "x" * (100 * 1024 - 20)}) for i in range(3)]
    encoded += [_encoded(f"s{i}", {"n": i}) for i in range(150)]
    chunks = send_chunks(encoded)
    assert [m["body"].encode() for c in chunks for m in c] == encoded  # order kept
    for chunk in chunks:
        assert len(chunk) <= MAX_BATCH_MESSAGES
        assert len(chunk) == 1 or _real_sizes(chunk) <= SEND_BATCH_BYTES < MAX_BATCH_BYTES
    assert all(len(e) <= MAX_MESSAGE_BYTES for e in encoded)


def test_medium_bodies_fill_chunks_by_bytes_before_count() -> None:
    encoded = [_encoded(str(i), {"text": "y" * 2_600}) for i in range(100)]  # ~270 KB real
    chunks = send_chunks(encoded)
    assert len(chunks) > 1
    assert all(_real_sizes(c) <= SEND_BATCH_BYTES for c in chunks)
    assert sum(len(c) for c in chunks) == 100


def test_multibyte_text_is_measured_in_utf8_bytes_not_characters() -> None:
    # 30 bodies of 3,000 "€" (3 bytes each in UTF-8): ~270 KB of bytes but only ~90,000 characters.
    encoded = [_encoded(str(i), {"text": "€" * 3_000}) for i in range(30)]
    chunks = send_chunks(encoded)
    assert len(chunks) > 1
    assert all(_real_sizes(c) <= SEND_BATCH_BYTES for c in chunks)


def test_the_bound_is_never_below_the_real_size() -> None:
    for value in [[], {}, [[]] * 30, [0.5] * 30, [1e20] * 30, "é€" * 100, {"a": [None, True, 2**40, -3]}]:
        assert json_bytes(value) <= json_bound(len(msgspec.json.encode(value)))
