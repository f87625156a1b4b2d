"""The scheduler Worker: the JobShard and Scheduler Durable Objects, the queue consumer, the RPC entrypoint and the REST API.

Thin by design: the classes' methods live in tsumugi_scheduler.entrypoints (ADR-0049) and one call builds the
classes (tsumugi_scheduler.entry_classes, ADR-0155); this module holds this repository's definition for the example performers (services/performers). `tsumugi init` scaffolds the same
shape for a project of your own.
"""

from workers import DurableObject, WorkerEntrypoint

from tsumugi_examples.greetings import greetings
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.entry_classes import entry_classes
from tsumugi_scheduler.sign_in import bearer_tokens, cloudflare_access


def _example_defaults(item):
    # Scheduler-side on_enqueue, for options the producer left out (docs/reference/additions.md A1): mail gets more
    # attempts; a quiet Slow (the stall demonstration) is at-most-once, so its silence ends STALLED for a
    # person to decide instead of being retried.
    if item.binding == "SendMail":
        return {"max_attempts": 5}
    if item.binding == "Slow" and isinstance(item.payload, dict) and item.payload.get("quiet") is True:
        return {"guarantee": "at-most-once"}
    return None


def _hello_payload(scheduled_at):
    return {"name": f"schedule at {scheduled_at}"}


TSUMUGI = define_tsumugi(
    performers=[
        "Hello",
        "Boom",
        "Slow",
        "SendMail",
        "NotifyFailure",
        "NotifySettled",
        "ListNames",
        "ReportGreetings",
        "Order",
    ],
    bindings={"Slow": {"policy": {"reaper_grace_ms": 5_000}}},
    on_enqueue=_example_defaults,
    on_failure="NotifyFailure",
    on_settled={"binding": "NotifySettled", "states": ["COMPLETED", "FAILED", "CANCELLED", "STALLED"]},
    # A recurring job (issue 12): Hello every 10 minutes, its payload made per occurrence.
    schedules={
        "hello-every-10-minutes": {"binding": "Hello", "payload": _hello_payload, "every_ms": 600_000}
    },
    flows=[greetings],
    # Sign-in (issue 30): a token per role (TSUMUGI_TOKEN is the admin's), or Cloudflare Access once the vars
    # TSUMUGI_ACCESS_TEAM and TSUMUGI_ACCESS_AUD are set (`tsumugi dev --access` sets them for its stand-in).
    # Anyone Access lets in may look; its groups decide who may act.
    auth=[
        bearer_tokens(),
        cloudflare_access(
            roles={"operator": {"groups": ["tsumugi-operators"]}, "admin": {"groups": ["tsumugi-admins"]}},
            default_role="viewer",
        ),
    ],
)


TsumugiJobShard, TsumugiScheduler, TsumugiRun, TsumugiRpc, Default = entry_classes(
    TSUMUGI, DurableObject, WorkerEntrypoint, module=__name__
)
