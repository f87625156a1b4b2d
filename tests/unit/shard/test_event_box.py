"""The event box's keeping rules, driven directly (docs/steps.md, "Events")."""

from __future__ import annotations

from tsumugi_core.events import EVENT_KEEP_MS
from tsumugi_core.testing import FixedClock, SequentialIds
from tsumugi_dev.do_sql import SqlStorage
from tsumugi_scheduler.event_box import EventBox


def test_an_id_makes_a_resend_harmless_only_while_the_event_is_kept() -> None:
    clock = FixedClock(1_000_000)
    with SqlStorage() as sql:  # closed: Python 3.13 fails a test that leaves a database open
        box = EventBox(sql, clock, SequentialIds())
        first = box.send("shipped", "o-1", '"x"', "e-1")
        assert box.send("shipped", "o-1", '"x"', "e-1").duplicate is True
        clock.advance(EVENT_KEEP_MS + 1)  # past its day; the alarm that sweeps it has not run yet
        again = box.send("shipped", "o-1", '"y"', "e-1")
        box.expire()  # what the box does right after a send
        assert (again.duplicate, again.kept_until) == (False, clock.now_ms() + EVENT_KEEP_MS)
        assert again.kept_until > first.kept_until
        # A wait that starts now is answered by the resent event at once, as by any event kept for the day.
        assert box.wait("shipped", "o-1", "J", "event:shipped", "S#0", clock.now_ms() + 1, []) is not None
