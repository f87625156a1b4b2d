"""JobShard calls whose results reach the API as plain Python values, on Cloudflare as on the local runtime.

On Cloudflare a Durable Object's RPC result arrives as a ``JsProxy`` (attribute access, no ``__getitem__``),
while the handlers and `SchedulerService` index results like dicts and lists. `PlainShards` wraps
``env.JOB_SHARD`` so every awaited call is passed through `tsumugi_scheduler._runtime.plain` (``to_py``);
Python values of the local runtime pass through unchanged. `shard_env` is the env the API hands to the
producer service, with that namespace in place of the raw one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from tsumugi_scheduler._runtime import plain

__all__ = ["PlainShards", "PlainStub", "ShardEnv", "shard_env"]


class PlainStub:
    """A JobShard stub whose awaited method results are plain values."""

    def __init__(self, stub: Any) -> None:
        """Wrap ``stub`` (``JOB_SHARD.getByName(name)``)."""
        self._stub = stub

    def __getattr__(self, method: str) -> Callable[..., Awaitable[Any]]:
        """``stub.<method>``, its result converted."""
        call = getattr(self._stub, method)

        async def plain_call(*args: Any) -> Any:
            return plain(await call(*args))

        return plain_call


class PlainShards:
    """``env.JOB_SHARD`` handing out `PlainStub` s."""

    def __init__(self, namespace: Any) -> None:
        """Wrap the Durable Object namespace."""
        self._namespace = namespace

    def getByName(self, name: str) -> PlainStub:
        """The object ``name``."""
        return PlainStub(self._namespace.getByName(name))


class ShardEnv:
    """A Worker env whose ``JOB_SHARD`` answers plain values; every other binding is the env's own."""

    def __init__(self, env: Any) -> None:
        """View ``env``."""
        self._env = env
        self.JOB_SHARD = PlainShards(env.JOB_SHARD)

    def __getattr__(self, name: str) -> Any:
        """Any other binding, as is."""
        return getattr(self._env, name)


def shard_env(env: Any) -> ShardEnv:
    """``env`` with plain JobShard results (idempotent: a `ShardEnv` is not wrapped twice)."""
    return env if isinstance(env, ShardEnv) else ShardEnv(env)
