"""The simulated system's performer Worker: one ``SimWork`` entrypoint per work binding, ``SimNotice`` for notices."""

from workers import Request, Response, WorkerEntrypoint

from tsumugi_performer.entrypoint import performer_entrypoint
from tsumugi_simulation._performers import SimNotice, SimWork

SimA = performer_entrypoint(WorkerEntrypoint, type("SimA", (SimWork,), {}))
SimB = performer_entrypoint(WorkerEntrypoint, type("SimB", (SimWork,), {}))
SimC = performer_entrypoint(WorkerEntrypoint, type("SimC", (SimWork,), {}))
SimFailure = performer_entrypoint(WorkerEntrypoint, type("SimFailure", (SimNotice,), {}))
SimSettled = performer_entrypoint(WorkerEntrypoint, type("SimSettled", (SimNotice,), {}))


class Default(WorkerEntrypoint):
    async def fetch(self, request: Request) -> Response:
        return Response("tsumugi simulation performers")
