"""The job events a Run object takes: one JSON text from the shards (ADR-0133), or the array itself."""

from __future__ import annotations

import msgspec

from tsumugi_scheduler.run.rows import JobEvent, job_events

_EVENTS = [
    {"nodeId": "a", "jobId": "Echo#0:x", "state": "COMPLETED", "result": '"ok"', "error": None},
    {"nodeId": "b", "jobId": "Echo#0:y", "state": "STALLED", "result": None, "error": "lost", "holdUntil": 9},
    {"nodeId": "c", "jobId": "Echo#0:z", "state": "COMPLETED", "result": "1", "spawns": [{"key": "k"}]},
]
_EXPECTED = [
    JobEvent(node_id="a", job_id="Echo#0:x", state="COMPLETED", result='"ok"'),
    JobEvent(node_id="b", job_id="Echo#0:y", state="STALLED", error="lost", hold_until=9),
    JobEvent(node_id="c", job_id="Echo#0:z", state="COMPLETED", result="1", spawns=[{"key": "k"}]),
]


def test_one_json_text_reads_as_the_events_it_holds() -> None:
    assert job_events(msgspec.json.encode(_EVENTS).decode()) == _EXPECTED


def test_the_array_itself_reads_the_same() -> None:
    assert job_events(_EVENTS) == _EXPECTED


def test_a_malformed_event_is_dropped_and_a_text_that_is_not_json_holds_none() -> None:
    text = msgspec.json.encode([{"nodeId": 5, "state": "COMPLETED"}, "x", _EVENTS[0]]).decode()
    assert job_events(text) == _EXPECTED[:1]
    assert job_events("[{") == []
    assert job_events('{"nodeId": "a"}') == []
