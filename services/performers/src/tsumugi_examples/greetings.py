"""The ``greetings`` flow: list the names of the run input, greet each with `Hello` (a fan-out), report.

Declared once here; the scheduler registers it (``define_tsumugi(flows=[greetings])``) and a producer may
import it to start runs. Start one over REST::

    POST /api/runs {"flow": "greetings", "input": {"names": ["a", "b", "c"]}}

The run ends COMPLETED with the nodes ``names``, ``hello`` (children ``hello:0`` .. ``hello:2``) and
``report``; ``hello``'s value is the fan-out summary ``{"total": 3, "succeeded": 3, "failed": 0}``, and the
run's output is ``report``'s result, ``"greeted 3 of 3 (0 failed)"``.
"""

from __future__ import annotations

import msgspec

from tsumugi_examples.hello import Hello, HelloPayload
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FanOutSummary, FlowBuilder, flow

__all__ = ["GreetingsInput", "ListNames", "ReportGreetings", "greetings"]


class GreetingsInput(msgspec.Struct, frozen=True, kw_only=True):
    """The run input: ``{"names": [...]}``."""

    names: list[str]


class ListNames(Performer[GreetingsInput, list[str]]):
    """Returns the names to greet (without blanks)."""

    async def perform(self, payload: GreetingsInput, ctx: JobContext) -> list[str]:
        """List."""
        return [name for name in payload.names if name.strip()]


class ReportGreetings(Performer[FanOutSummary, str]):
    """Reports how many greetings went out."""

    async def perform(self, payload: FanOutSummary, ctx: JobContext) -> str:
        """Report."""
        return f"greeted {payload['succeeded']} of {payload['total']} ({payload['failed']} failed)"


@flow("greetings", GreetingsInput)
def greetings(f: FlowBuilder[GreetingsInput]) -> None:
    """``names`` -> ``hello`` (one Hello per name) -> ``report``."""
    names = f.node("names", ListNames, input=lambda run, deps: run)
    hello = f.fan_out(
        "hello",
        Hello,
        after=[names],
        over=lambda run, deps: deps[names],
        input=lambda name, run, index: HelloPayload(name=name),
    )
    report = f.node("report", ReportGreetings, after=[hello], input=lambda run, deps: deps[hello])
    f.output(report)
