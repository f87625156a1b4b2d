"""Performers and flows the flow tests share (declared as a user would, in a module)."""

from __future__ import annotations

import msgspec

from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FanOutSummary, FlowBuilder, flow


class Names(msgspec.Struct, frozen=True):
    names: list[str]


class Split(Performer[Names, list[str]]):
    async def perform(self, payload: Names, ctx: JobContext) -> list[str]:
        return payload.names


class Greet(Performer[str, str]):
    async def perform(self, payload: str, ctx: JobContext) -> str:
        return "hi " + payload


class Report(Performer[FanOutSummary, str]):
    async def perform(self, payload: FanOutSummary, ctx: JobContext) -> str:
        return f"{payload['succeeded']}/{payload['total']}"


@flow("demo", Names)
def demo(f: FlowBuilder[Names]) -> None:
    names = f.node("list", Split, input=lambda run, deps: run)
    greet = f.fan_out(
        "greet", Greet, after=[names], over=lambda run, deps: deps[names], input=lambda item, run, index: item
    )
    f.node("report", Report, after=[greet], input=lambda run, deps: deps[greet])
