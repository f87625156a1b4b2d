"""The DDL and the row Structs describe the same columns (pragma_table_info)."""

from __future__ import annotations

from tests.unit.shard.shard_world import World
from tsumugi_scheduler.shard.schema import TABLE_ROWS


def test_every_table_matches_its_row_struct(world: World) -> None:
    for table, row in TABLE_ROWS.items():
        columns = [r["name"] for r in world.sql.exec("SELECT name FROM pragma_table_info(?)", table)]
        assert columns == list(row.__struct_fields__), table
