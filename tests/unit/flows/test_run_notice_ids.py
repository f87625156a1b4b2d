"""A run notice's job id: derived (a re-send is absorbed) and the run incarnation's own (ADR-0177)."""

from __future__ import annotations

import hashlib
from typing import Any

from tsumugi_core.flow_advance import Progress
from tsumugi_scheduler.run.notices import notice_items

COUNTS = Progress(node_total=2, node_done=2, node_failed=1)


def run(nonce: str | None, resumes: int = 0) -> dict[str, Any]:
    return {
        "id": "greetings:r1",
        "flow": "greetings",
        "state": "FAILED",
        "notices": '{"on_failure": "NotifyFailure", "on_settled": "NotifySettled"}',
        "updated_at": 5_000,
        "resumes": resumes,
        "nonce": nonce,
    }


def ids(row: dict[str, Any]) -> list[str]:
    return [item["id"] for item in notice_items(row, COUNTS, [], lambda binding: 1)]


def _unkeyed(*parts: str) -> str:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=12).hexdigest()


def test_a_resend_names_the_same_jobs_and_each_kind_its_own() -> None:
    first = ids(run("nonce1"))
    assert first == ids(run("nonce1"))
    assert [i.split(":")[0] for i in first] == ["NotifyFailure#0", "NotifySettled#0"]
    assert len(set(first)) == 2


def test_what_a_caller_can_read_of_the_run_does_not_give_its_notice_ids() -> None:
    # The run id, the kind and the resume count are public; before ADR-0177 they were the whole input.
    public_only = [
        f"Notify{kind.capitalize()}#0:run-{kind}-{_unkeyed('greetings:r1', kind, '0')}"
        for kind in ("failure", "settled")
    ]
    made = ids(run("nonce1"))
    assert set(made).isdisjoint(public_only)
    assert set(made).isdisjoint(ids(run("nonce2")))  # another incarnation of the run id
    assert set(made).isdisjoint(ids(run("nonce1", resumes=1)))  # a resumed run that ends again
