"""Static typing cases for tsumugi_performer.flow, checked by test_flow_types.py (not a test module itself).

Each ``reveal_type`` line states the expected type in a trailing "revealed" comment; each line that must be
rejected ends in an "error" comment. Nothing here runs.
"""

from __future__ import annotations

from typing import reveal_type

import msgspec

from tsumugi_performer import JobContext, Performer
from tsumugi_performer.flow import FlowBuilder, flow


class Names(msgspec.Struct):
    names: list[str]


class Greeting(msgspec.Struct):
    name: str


class Split(Performer[Names, list[str]]):
    async def perform(self, payload: Names, ctx: JobContext) -> list[str]:
        return payload.names


class Greet(Performer[Greeting, str]):
    async def perform(self, payload: Greeting, ctx: JobContext) -> str:
        return payload.name


@flow("typed", Names)
def typed(f: FlowBuilder[Names]) -> None:
    names = f.node("names", Split, input=lambda run, deps: run)
    reveal_type(names)  # revealed: Ref[list[str]]
    hello = f.fan_out(
        "hello",
        Greet,
        after=[names],
        over=lambda run, deps: deps[names],
        input=lambda name, run, index: Greeting(name=name),
    )
    reveal_type(hello)  # revealed: Ref[FanOutSummary]
    last = f.node(
        "last", Greet, after=[hello], input=lambda run, deps: Greeting(name=str(deps[hello]["total"]))
    )
    reveal_type(last)  # revealed: Ref[str]
    f.node("wrong", Greet, input=lambda run, deps: run)  # error
    f.node("keyed", Split, input=lambda run, deps: run, unique_key="k")  # error


reveal_type(typed)  # revealed: Flow[Names]
