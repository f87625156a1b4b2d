"""Who changed what through the REST API (issue 30, ADR-0151): one line in the log, one row in D1.

After a state-changing route answers 2xx, the router records the change with the signed-in identity: a log line
on ``tsumugi.jobs`` (``job <id> cancelJob by ada@acme.dev (operator)``; ``tsumugi dev`` shows it, on Cloudflare
it is in the Worker's logs) and a row of the read model's ``action_log``, which the job detail reads
(`actions_for`). The change has already happened when the row is written, so a failed write is logged, with
the identity, and never turns the answer into an error.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from tsumugi_scheduler.identity import Identity
from tsumugi_scheduler.readmodel.d1_port import result_rows

__all__ = ["ACTIONS_SHOWN", "ActionEntry", "actions_for", "record_action"]

ACTIONS_SHOWN: Final = 20
"""The newest entries a job detail shows, for the job and for its binding each."""
_INSERT: Final = "INSERT INTO action_log (at, actor, role, action, target) VALUES (?, ?, ?, ?, ?)"
_FOR_TARGET: Final = (
    "SELECT at, actor, role, action, target FROM action_log WHERE target = ? ORDER BY seq DESC LIMIT ?"
)
_job_log = logging.getLogger("tsumugi.jobs")
_log = logging.getLogger("tsumugi_scheduler.api")

ActionEntry = dict[str, Any]
"""``{"at", "by", "role", "action", "target"}``; a target is a job or run id, ``binding:<name>`` or
``schedule:<name>``."""


async def record_action(
    db: Any, identity: Identity, action: str, targets: list[str | None], *, at: int
) -> None:
    """Log and store ``action`` by ``identity`` on each of ``targets`` (None: a bulk action by filter)."""
    if not targets:
        return
    role = None if identity.role is None else identity.role.value
    for target in targets:
        shown = (target or "(filter)").removeprefix("binding:").removeprefix("schedule:")
        _job_log.info("%s %s %s by %s (%s)", _kind(target), shown, action, identity.name, role or "no role")
    try:
        await db.batch([db.prepare(_INSERT).bind(at, identity.name, role, action, t) for t in targets])
    except Exception:  # the change stands; say who made it where it is still seen
        _log.exception("%s by %s on %s was not recorded in action_log", action, identity.name, targets)


def _kind(target: str | None) -> str:
    if target is None:
        return "bulk"
    if target.startswith(("binding:", "schedule:")):
        return target.split(":", 1)[0]
    return "job" if "#" in target else "run"


async def actions_for(db: Any, target: str) -> list[ActionEntry]:
    """The newest `ACTIONS_SHOWN` changes recorded for ``target``, newest first."""
    rows = result_rows(await db.prepare(_FOR_TARGET).bind(target, ACTIONS_SHOWN).all())
    return [
        {"at": r["at"], "by": r["actor"], "role": r["role"], "action": r["action"], "target": r["target"]}
        for r in rows
    ]
