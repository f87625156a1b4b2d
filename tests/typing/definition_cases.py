"""Static typing cases for define_tsumugi's options, checked by test_definition_types.py (not a test module).

Each line that must be rejected ends in an "error" comment. Nothing here runs.
"""

from __future__ import annotations

import datetime as dt

from tsumugi_core.options import ExponentialBackoff, FixedBackoff
from tsumugi_scheduler.definition import define_tsumugi

define_tsumugi(
    performers=["Hello"],
    bindings={
        "Hello": {"shards": 2, "policy": {"concurrency": 5, "reaper_grace_ms": dt.timedelta(seconds=5)}}
    },
    schedules={
        "nightly": {"binding": "Hello", "payload": {}, "cron": "0 3 * * *", "timezone": "Asia/Tokyo"},
        "often": {"binding": "Hello", "payload": {}, "every_ms": dt.timedelta(minutes=10)},
    },
    retention={"older_than_ms": dt.timedelta(days=7)},
    runs={"max_nodes": 100},
)
define_tsumugi(bindings={"Hello": {"policy": {"concurency": 5}}})  # error
define_tsumugi(bindings={"Hello": {"polcy": {"concurrency": 5}}})  # error
define_tsumugi(bindings={"Hello": {"policy": {"rate": {"tokens": 1, "interval": 1000}}}})  # error
define_tsumugi(schedules={"n": {"binding": "Hello", "payload": {}, "evry_ms": 60_000}})  # error
define_tsumugi(schedules={"n": {"binding": "Hello", "payload": {}, "overlap": "sometimes"}})  # error
define_tsumugi(retention={"older_than": 1000})  # error
define_tsumugi(on_settled={"binding": "Hello", "states": ["DONE"]})  # error
define_tsumugi(runs={"max_node": 10})  # error

# Backoffs and rates take timedelta too (ADR-0161); their fields are still checked by name and type.
define_tsumugi(
    bindings={"Hello": {"policy": {"rate": {"tokens": 1, "interval_ms": dt.timedelta(seconds=1)}}}},
    schedules={
        "fixed": {
            "binding": "Hello",
            "payload": {},
            "every_ms": 60_000,
            "backoff": FixedBackoff(delay_ms=dt.timedelta(seconds=30)),
        },
        "exp": {
            "binding": "Hello",
            "payload": {},
            "every_ms": 60_000,
            "backoff": ExponentialBackoff(base_ms=dt.timedelta(seconds=1), max_ms=60_000),
        },
    },
)
FixedBackoff(delay=1000)  # error
ExponentialBackoff(base_ms="1s")  # error
