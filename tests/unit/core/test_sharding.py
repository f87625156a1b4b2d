"""FNV-1a over UTF-16 code units and shard resolution (docs/reference/original.md §1.11)."""

from __future__ import annotations

from collections import Counter

import pytest

from tsumugi_core.ids import InvalidJobIdError
from tsumugi_core.sharding import fnv1a32, resolve_shard


class TestFnv1a32:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            # Published FNV-1a 32-bit test vectors (ASCII: one code unit per byte).
            ("", 0x811C9DC5),
            ("a", 0xE40C292C),
            ("foobar", 0xBF9CF968),
        ],
    )
    def test_known_vectors(self, text: str, expected: int) -> None:
        assert fnv1a32(text) == expected

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            # Values computed with JavaScript charCodeAt + Math.imul, as the original hashes.
            ("\u00e9", 0x6C0B6C44),
            ("\u65e5\u672c\u8a9e", 0x5406374E),
            ("order-42", 0x572446F4),
        ],
    )
    def test_bmp_characters_hash_as_single_code_units(self, text: str, expected: int) -> None:
        assert fnv1a32(text) == expected

    def test_non_bmp_character_hashes_as_its_surrogate_pair(self) -> None:
        grinning = "\U0001f600"
        assert fnv1a32(grinning) == 0xCB31C4B8
        assert fnv1a32(grinning) == fnv1a32("\ud83d\ude00")
        assert fnv1a32("a\U0001f600b") == 0x8FCA8501

    def test_utf16_differs_from_utf8_bytes(self) -> None:
        utf8_hash = 0x811C9DC5
        for byte in "\u00e9".encode():
            utf8_hash = ((utf8_hash ^ byte) * 0x01000193) & 0xFFFFFFFF
        assert fnv1a32("\u00e9") != utf8_hash

    def test_lone_surrogate_is_hashed_not_rejected(self) -> None:
        assert 0 <= fnv1a32("\ud800") <= 0xFFFFFFFF

    def test_result_is_unsigned_32_bit(self) -> None:
        assert all(0 <= fnv1a32(f"key-{i}") <= 0xFFFFFFFF for i in range(200))


class TestResolveShard:
    def test_single_shard_ignores_the_partition_key(self) -> None:
        assert resolve_shard("MAIL", 1, None) == 0
        assert resolve_shard("MAIL", 1, "tenant-9") == 0

    def test_sharded_binding_hashes_the_partition_key(self) -> None:
        assert resolve_shard("MAIL", 4, "order-42") == 0x572446F4 % 4
        assert resolve_shard("MAIL", 7, "foobar") == 0xBF9CF968 % 7

    def test_same_key_always_lands_on_the_same_shard(self) -> None:
        assert len({resolve_shard("MAIL", 8, "tenant-3") for _ in range(5)}) == 1

    def test_sharded_binding_without_partition_key_is_refused(self) -> None:
        with pytest.raises(InvalidJobIdError) as caught:
            resolve_shard("MAIL", 2, None)
        assert str(caught.value) == (
            "MAIL is split into shards=2 and requires partitionKey, omitting it drops the per-key guarantees"
        )

    def test_empty_partition_key_is_a_key(self) -> None:
        assert resolve_shard("MAIL", 4, "") == 0x811C9DC5 % 4

    @pytest.mark.parametrize("shards", [0, -1, True, 2.0, "2"])
    def test_shards_must_be_a_positive_integer(self, shards: object) -> None:
        with pytest.raises(ValueError, match="shards must be an integer of at least 1"):
            resolve_shard("MAIL", shards, "k")  # type: ignore[arg-type]

    def test_binding_name_is_validated(self) -> None:
        with pytest.raises(InvalidJobIdError, match="invalid binding name"):
            resolve_shard("MA IL", 1, None)

    def test_distribution_over_four_shards(self) -> None:
        counts = Counter(resolve_shard("MAIL", 4, f"key-{i}") for i in range(1000))
        assert sorted(counts) == [0, 1, 2, 3]
        assert all(count > 150 for count in counts.values()), counts
