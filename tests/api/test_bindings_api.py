"""Bindings: the catalogue, and runtime policy pinned on every shard and reset.

Source: docs/reference/additions.md A9.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.api_world import SteppedClock, World
from tsumugi_scheduler.definition import define_tsumugi
from tsumugi_scheduler.shard.engine import PROJECTION_HOLD_MS


async def test_bindings_lists_registered_performers_sorted_with_their_shard_counts(world: World) -> None:
    assert await world.request("GET", "/api/bindings") == (
        200,
        {"bindings": ["MAIL", "Notify", "SMS"], "shards": {"MAIL": 1, "Notify": 1, "SMS": 2}, "notices": []},
    )


async def test_without_registered_performers_bindings_come_from_the_read_model(
    tmp_path: Path, clock: SteppedClock
) -> None:
    world = World(tmp_path, clock, define_tsumugi())
    try:
        await world.enqueue("Zeta")
        await world.enqueue("Alpha")
        await world.tick()  # dispatches both; their QUEUED rows reach the read model with the next alarm
        clock.advance(PROJECTION_HOLD_MS)
        await world.tick()
        assert await world.request("GET", "/api/bindings") == (
            200,
            {"bindings": ["Alpha", "Zeta"], "shards": {"Alpha": 1, "Zeta": 1}, "notices": []},
        )
    finally:
        await world.aclose()


async def test_bindings_name_the_notice_receivers(tmp_path: Path, clock: SteppedClock) -> None:
    definition = define_tsumugi(
        performers=["MAIL", "Failed", "Settled"],
        on_failure="Failed",
        on_settled={"binding": "Settled", "states": ["COMPLETED"]},
    )
    world = World(tmp_path, clock, definition)
    try:
        body = (await world.request("GET", "/api/bindings"))[1]
        assert (body["bindings"], body["notices"]) == (["Failed", "MAIL", "Settled"], ["Failed", "Settled"])
    finally:
        await world.aclose()


async def test_policy_is_pinned_on_every_shard_and_reset_returns_to_the_code(world: World) -> None:
    status, body = await world.request(
        "POST",
        "/api/bindings/SMS/policy",
        {
            "concurrency": 3,
            "rate": {"tokens": 2, "interval_ms": 1000},
            "paused": True,
            "failed_retention_ms": 60_000,
        },
    )
    assert status == 200
    assert [s["shard"] for s in body["shards"]] == [0, 1]
    for shard in body["shards"]:
        settings = shard["settings"]
        assert (
            settings["concurrency"],
            settings["rate"],
            settings["paused"],
            settings["failed_retention_ms"],
        ) == (3, {"tokens": 2, "interval_ms": 1000}, True, 60_000)
        assert (
            settings["per_key_concurrency"] == 1
        )  # not in the body: the value in force (the default) is pinned
        assert shard["pinned"] is True
    for name in ("SMS#0", "SMS#1"):
        engine = world.shard(name).host.engine(name)
        assert engine is not None
        assert engine.settings.policy.paused
    status, body = await world.request("POST", "/api/bindings/SMS/policy/reset")
    assert status == 200
    assert all(
        s["settings"]["paused"] is False and s["settings"]["concurrency"] == 100 for s in body["shards"]
    )
    assert [s["pinned"] for s in body["shards"]] == [False, False]


async def test_a_runtime_change_pins_the_code_settings_in_force_and_diagnostics_show_it(
    tmp_path: Path, clock: SteppedClock
) -> None:
    definition = define_tsumugi(
        performers=["MAIL", "SMS"],
        bindings={"SMS": {"shards": 2, "policy": {"concurrency": 4}, "failed_retention_ms": 60_000}},
    )
    world = World(tmp_path, clock, definition)
    try:
        # No enqueue has reached the shards yet: the pin starts from the deployed definition, not the defaults.
        status, body = await world.request("POST", "/api/bindings/SMS/policy", {"sweep_after_ms": 1_000})
        assert status == 200
        for shard in body["shards"]:
            assert shard["pinned"] is True
            settings = shard["settings"]
            assert (settings["concurrency"], settings["sweep_after_ms"], settings["failed_retention_ms"]) == (
                4,
                1_000,
                60_000,
            )
        status, diagnostics = await world.request("GET", "/api/diagnostics")
        assert status == 200
        sms, mail = diagnostics["bindings"]["SMS"], diagnostics["bindings"]["MAIL"]
        assert (sms["pinned"], [s["pinned"] for s in sms["shards"]]) == (True, [True, True])
        assert (mail["pinned"], [s["pinned"] for s in mail["shards"]]) == (False, [False])
        status, body = await world.request("POST", "/api/bindings/SMS/policy/reset")
        assert [(s["pinned"], s["settings"]["sweep_after_ms"]) for s in body["shards"]] == [
            (False, 300_000),
            (False, 300_000),
        ]
        status, diagnostics = await world.request("GET", "/api/diagnostics")
        assert diagnostics["bindings"]["SMS"]["pinned"] is False
    finally:
        await world.aclose()


async def test_pausing_stops_dispatch_but_not_enqueue(world: World) -> None:
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": True})
    job_id = await world.enqueue("MAIL")
    await world.tick()
    assert world.env.TSUMUGI_QUEUE.sent == []
    await world.request("POST", "/api/bindings/MAIL/policy", {"paused": False})
    await world.tick()
    assert [m["jobId"] for m in world.env.TSUMUGI_QUEUE.sent] == [job_id]


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        (
            {},
            "body",
            "must set at least one of concurrency, rate, per_key_concurrency, per_key_rate, aging_interval_ms, reaper_grace_ms, paused, sweep_after_ms, failed_retention_ms",
        ),
        (
            {"speed": 1},
            "speed",
            "is not a policy field (one of concurrency, rate, per_key_concurrency, per_key_rate, aging_interval_ms, reaper_grace_ms, paused, sweep_after_ms, failed_retention_ms)",
        ),
        ({"concurrency": -1}, "concurrency", "must be at least 0"),
        ({"concurrency": 1.5}, "concurrency", "must be an integer"),
        ({"per_key_concurrency": 0}, "per_key_concurrency", "must be at least 1"),
        ({"paused": "yes"}, "paused", "must be a boolean"),
        ({"rate": {"tokens": 1}}, "rate", "must be null or an object with exactly tokens and interval_ms"),
        ({"per_key_rate": {"tokens": 0, "interval_ms": 10}}, "per_key_rate.tokens", "must be at least 1"),
        ({"rate": {"tokens": 1, "interval_ms": "1s"}}, "rate.interval_ms", "must be an integer"),
        ({"sweep_after_ms": None}, "sweep_after_ms", "must be an integer"),
        ({"aging_interval_ms": 0}, "aging_interval_ms", "must be at least 1"),
    ],
)
async def test_policy_refuses_bad_fields_naming_the_field_and_rule(
    world: World, body: dict[str, object], field: str, rule: str
) -> None:
    assert await world.request("POST", "/api/bindings/MAIL/policy", body) == (
        400,
        {"error": f"{field} {rule}", "field": field, "rule": rule},
    )


async def test_policy_of_an_unknown_or_malformed_binding_is_refused(world: World) -> None:
    assert await world.request("POST", "/api/bindings/Nope/policy", {"paused": True}) == (
        404,
        {"error": "unknown binding: Nope"},
    )
    assert await world.request("POST", "/api/bindings/9x/policy/reset") == (
        400,
        {"error": "binding is not a valid name"},
    )
    assert await world.request("POST", "/api/bindings/MAIL/policy", "{") == (
        400,
        {
            "error": "body must be valid JSON",
            "line": 1,
            "column": 2,
            "detail": "Expecting property name enclosed in double quotes",
        },
    )
