"""What resuming a FAILED run does to each of its nodes (ADR-0116): the pure plan the Run object applies.

A node that did not succeed (FAILED, STALLED, SKIPPED, CANCELLED) runs again: a job or subflow node with a new
job or child run (its resume count goes up), a fan-out that expanded is reopened to sum its children again, a
fan-out that failed before expanding expands again. A fan-out that COMPLETED is reopened too when one of its
children runs again, so its summary (the value its downstream receives) counts the new endings, not the old.
A child refused when it was made (its payload too large for a job) stays FAILED: running it again would run it
without its payload. Completed nodes keep their results.

Example:
    >>> nodes = [NodeView(id="each", state="COMPLETED", container=True),
    ...          NodeView(id="each:0", state="FAILED", parent="each", origin="fanOut"),
    ...          NodeView(id="after", state="SKIPPED", after=("each",))]
    >>> [(s.node_id, s.kind) for s in resume_steps(nodes)]
    [('each', 'reopen'), ('each:0', 'rerun'), ('after', 'rerun')]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final, Literal

import msgspec

from tsumugi_core.flow_advance import NodeView

__all__ = ["RESUMABLE_STATES", "ResumeStep", "resume_steps"]

RESUMABLE_STATES: Final = frozenset({"FAILED", "STALLED", "SKIPPED", "CANCELLED"})
"""Node states a resume runs again."""


class ResumeStep(msgspec.Struct, frozen=True, kw_only=True):
    """One node's part in a resume.

    ``rerun``: back to PENDING with a new resume count (a new job or child run when it starts); ``reopen``: a
    fan-out back to RUNNING, its summary dropped, to sum its children once they end again.
    """

    node_id: str
    kind: Literal["rerun", "reopen"]


def resume_steps(nodes: Sequence[NodeView], refused: Collection[str] = ()) -> list[ResumeStep]:
    """The steps of one resume, in node order; ``refused``: children whose job was refused when made."""
    expanded = {n.parent for n in nodes if n.parent is not None}
    rerun = {
        n.id
        for n in nodes
        if n.state in RESUMABLE_STATES and n.id not in refused and not (n.container and n.id in expanded)
    }
    reopened = {n.parent for n in nodes if n.id in rerun and n.parent is not None}
    steps: list[ResumeStep] = []
    for node in nodes:
        if node.id in rerun:
            steps.append(ResumeStep(node_id=node.id, kind="rerun"))
        elif (
            node.container
            and node.id in expanded
            and (node.state in RESUMABLE_STATES or (node.state == "COMPLETED" and node.id in reopened))
        ):
            steps.append(ResumeStep(node_id=node.id, kind="reopen"))
    return steps
