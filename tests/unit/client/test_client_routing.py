"""Shard routing and per-shard batches.

Source: docs/reference/original.md §1.11, docs/design/scheduler-rpc.md §2.1.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_client._routing import Destination, destination_of, normalize_bindings, plan_batches
from tsumugi_core.options import EnqueueItem, EnqueueValidationError
from tsumugi_core.sharding import fnv1a32


class TestNormalizeBindings:
    def test_none_and_empty_mean_no_shard_counts(self) -> None:
        assert normalize_bindings(None) == {}
        assert normalize_bindings({}) == {}

    def test_shards_default_to_one(self) -> None:
        assert normalize_bindings({"MAIL": {}, "SMS": {"shards": 4}}) == {"MAIL": 1, "SMS": 4}

    @pytest.mark.parametrize(
        ("config", "message"),
        [
            ({"MAIL": {"shards": 0}}, r"bindings\['MAIL'\]\.shards must be an integer of at least 1, got 0"),
            (
                {"MAIL": {"shards": True}},
                r"bindings\['MAIL'\]\.shards must be an integer of at least 1, got True",
            ),
            ({"MAIL": {"shards": 2.0}}, r"bindings\['MAIL'\]\.shards must be an integer"),
            (
                {"MAIL": {"shard": 2}},
                r"bindings\['MAIL'\]\.shard is not a binding option \(allowed: shards\)",
            ),
            ({"MAIL": 2}, r"bindings\['MAIL'\] must be a mapping"),
            ({"9MAIL": {"shards": 2}}, r"bindings\['9MAIL'\] invalid binding name"),
        ],
    )
    def test_bad_config_names_the_entry_and_the_rule(self, config: dict[str, Any], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            normalize_bindings(config)


class TestDestination:
    def test_a_binding_without_a_shard_count_is_left_to_the_scheduler(self) -> None:
        item = EnqueueItem(binding="MAIL", payload=None, partition_key="k")
        assert destination_of(item, {}) == Destination(binding="MAIL", shard=None)

    def test_one_shard_ignores_the_partition_key(self) -> None:
        item = EnqueueItem(binding="MAIL", payload=None, partition_key="k")
        assert destination_of(item, {"MAIL": 1}) == Destination(binding="MAIL", shard=0)

    def test_sharded_binding_hashes_the_partition_key(self) -> None:
        item = EnqueueItem(binding="MAIL", payload=None, partition_key="user-42")
        assert destination_of(item, {"MAIL": 4}).shard == fnv1a32("user-42") % 4

    def test_sharded_binding_without_partition_key_is_a_validation_error(self) -> None:
        with pytest.raises(EnqueueValidationError) as caught:
            destination_of(EnqueueItem(binding="MAIL", payload=None), {"MAIL": 4})
        assert caught.value.field == "partition_key"
        assert "MAIL is split into shards=4 and requires partitionKey" in caught.value.rule

    def test_a_pinned_id_names_its_shard(self) -> None:
        item = EnqueueItem(binding="MAIL", payload=None, id="MAIL#3:abc")
        assert destination_of(item, {}) == Destination(binding="MAIL", shard=3)
        assert destination_of(item, {"MAIL": 4}) == Destination(binding="MAIL", shard=3)

    def test_a_pinned_id_on_a_shard_the_binding_lacks_is_refused(self) -> None:
        with pytest.raises(EnqueueValidationError, match="id names shard 3 but MAIL has shards=2"):
            destination_of(EnqueueItem(binding="MAIL", payload=None, id="MAIL#3:abc"), {"MAIL": 2})

    def test_a_pinned_id_must_agree_with_its_partition_key(self) -> None:
        key = next(k for k in (f"k{i}" for i in range(100)) if fnv1a32(k) % 4 != 1)
        item = EnqueueItem(binding="MAIL", payload=None, id="MAIL#1:abc", partition_key=key)
        with pytest.raises(
            EnqueueValidationError, match="id is on shard 1 but partition_key routes to shard"
        ):
            destination_of(item, {"MAIL": 4})


class TestPlanBatches:
    def test_groups_by_destination_in_first_appearance_order(self) -> None:
        a, b, c = (Destination(binding="A", shard=s) for s in (0, 1, None))
        batches = plan_batches([b, a, b, c, a])
        assert [(batch.destination, batch.positions) for batch in batches] == [
            (b, (0, 2)),
            (a, (1, 4)),
            (c, (3,)),
        ]

    def test_big_groups_are_chunked_in_order(self) -> None:
        a = Destination(binding="A", shard=0)
        batches = plan_batches([a] * 5, max_items=2)
        assert [batch.positions for batch in batches] == [(0, 1), (2, 3), (4,)]

    def test_no_items_no_batches(self) -> None:
        assert plan_batches([]) == []
