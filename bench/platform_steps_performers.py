"""The performer Worker bench/platform.py runs for its step workloads: ``Hello`` and ``Steps``.

``Steps`` runs ``steps`` durable steps (each answers a small record, as a payment call would), then sleeps
``sleep_s`` when set, then waits for event ``bench``/``event`` when set (for up to a day). The wall time of
each ``ctx.step`` call that ran its function (the save's round trip to the shard included) is appended to
``STEP_SECONDS``, which the benchmark reads.
"""

import time
from datetime import timedelta

from workers import WorkerEntrypoint

from tsumugi_examples import Hello as HelloPerformer
from tsumugi_performer import JobContext, Performer
from tsumugi_performer.entrypoint import performer_entrypoint


def _charge(n: int) -> dict[str, object]:
    return {"charge_id": f"ch_{n}", "amount": 1200}


STEP_SECONDS: list[float] = []


class StepsPerformer(Performer[dict, int]):
    async def perform(self, payload: dict, ctx: JobContext) -> int:
        for n in range(int(payload.get("steps", 0))):
            started = time.perf_counter()
            await ctx.step("charge", _charge, n)
            STEP_SECONDS.append(time.perf_counter() - started)
        if payload.get("sleep_s"):
            await ctx.sleep(timedelta(seconds=int(payload["sleep_s"])))
        if payload.get("event"):
            await ctx.wait_for_event("bench", key=str(payload["event"]), timeout=timedelta(days=1))
        return len(ctx.step_names)


Hello = performer_entrypoint(WorkerEntrypoint, HelloPerformer)
Steps = performer_entrypoint(WorkerEntrypoint, type("Steps", (StepsPerformer,), {}))


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        from workers import Response

        return Response("bench performers: Hello, Steps")
