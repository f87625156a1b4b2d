"""The simulated system's producer Worker: only its ``TSUMUGI`` Service Binding is used (by the simulator)."""

from workers import Request, Response, WorkerEntrypoint


class Default(WorkerEntrypoint):
    async def fetch(self, request: Request) -> Response:
        return Response("tsumugi simulation producer")
