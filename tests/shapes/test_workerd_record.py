"""The committed workerd shape record is what the pinned workerd returns today (ADR-0104).

The recorder runs once per session on the binary `npm ci` installed; any difference from the committed
record fails with the paths that differ, so a wrangler bump (or an edit to the recorder) that changes what
the platform returns cannot go unnoticed. Re-record with the command in the failure message and review the
diff: every changed shape is one the local runtime must follow.
"""

from __future__ import annotations

import json
from typing import Any

from tests.shapes.shape_record import RERECORD, ROOT, differences


def test_a_fresh_recording_equals_the_committed_record(
    fresh_record: dict[str, Any], committed_record: dict[str, Any]
) -> None:
    found = list(differences(committed_record, fresh_record))
    assert not found, (
        f"workerd now returns other shapes than tests/shapes/workerd-shapes.json records "
        f"({len(found)} differences; re-record with `{RERECORD}` and review the diff):\n"
        + "\n".join(found[:40])
    )


def test_the_recording_made_no_request_beyond_the_machine(fresh_record: dict[str, Any]) -> None:
    # Every Worker's outbound fetch goes to the driver, which refuses and lists it; miniflare's own `cf`
    # download is switched off. Bindings (D1, queues, the dataset) are services inside the same workerd.
    assert fresh_record["outbound_requests"] == []


def test_the_record_names_the_binary_the_pinned_wrangler_installs(fresh_record: dict[str, Any]) -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())["packages"]
    about = fresh_record["about"]
    assert about["wrangler"] == lock["node_modules/wrangler"]["version"]
    assert about["miniflare"] == lock["node_modules/miniflare"]["version"]
    assert about["workerd"] == lock["node_modules/workerd"]["version"]
    # The Workers run at the newest compatibility date the binary knows (it refuses later ones).
    workerd_main = (ROOT / "node_modules/workerd/lib/main.js").read_text()
    assert f'compatibilityDate = "{about["compatibility_date"]}"' in workerd_main


def test_differences_names_each_changed_leaf_by_path() -> None:
    want = {"a": [{"typeof": "number", "value": 1}], "b": {"c": True}}
    got = {"a": [{"typeof": "number", "value": 1.0}], "b": {}, "d": None}
    assert sorted(differences(want, got)) == [
        "$.a[0].value: got 1.0, want 1",
        "$.b.c: missing (want true)",
        "$.d: unexpected null",
    ]
