"""The simulated system's producer Worker: only its ``TSUMUGI`` Service Binding is used (by the simulator)."""

from workers import Response, WorkerEntrypoint


class Default(WorkerEntrypoint):
    async def fetch(self, request):
        return Response("tsumugi simulation producer")
