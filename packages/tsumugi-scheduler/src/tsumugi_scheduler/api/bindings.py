"""Binding routes: the catalogue and the runtime policy applied to every shard.

Source: docs/reference/additions.md A9.

``POST /api/bindings/{binding}/policy`` changes the given fields on each shard of the binding (shards in
parallel) and pins the whole settings then in force: the code's settings no longer apply until
``.../policy/reset`` returns to them (ADR-0058). Each answers every shard's effective settings and whether
they are pinned, so an operator sees what is in force.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.ids import InvalidJobIdError, validate_binding_name
from tsumugi_core.options import EnqueueValidationError
from tsumugi_scheduler.api.answers import bad_request, json_response, validation_error
from tsumugi_scheduler.api.bodies import parse_policy
from tsumugi_scheduler.api.context import ApiContext, api_of, env_of

__all__ = ["list_bindings", "reset_policy", "set_policy"]


async def list_bindings(request: Request) -> Response:
    """``GET /api/bindings``: registered performers sorted (else the read model's), with their shard counts.

    The counts let an HTTP client route like the scheduler and make the job ids itself (ADR-0063). ``notices``
    names the bindings that receive the scheduler's failure and settled notices (``on_failure``,
    ``on_settled``), so a dashboard can tell the operator's own jobs from notice jobs.
    """
    api = api_of(request)
    names = await api.bindings(env_of(request))
    notices = api.definition.notices
    receivers = sorted(
        {name for name in (notices.on_failure, notices.on_settled_binding) if name is not None}
    )
    return json_response(
        200,
        {
            "bindings": names,
            "shards": {name: api.definition.shards_of(name) for name in names},
            "notices": receivers,
        },
    )


async def _binding(request: Request, api: ApiContext, env: Any) -> str:
    binding = str(request.path_params["binding"])
    try:
        validate_binding_name(binding)
    except InvalidJobIdError:
        raise bad_request("binding is not a valid name") from None
    if api.definition.performers:
        await api.known_binding(env, binding)
    return binding


async def _on_every_shard(api: ApiContext, env: Any, binding: str, method: str, *args: Any) -> Response:
    names = api.shard_names(binding)

    async def one(name: str) -> Any:
        return await getattr(api.stub(env, name), method)(name, *args)

    try:
        answers = await asyncio.gather(*(one(name) for name in names))
    except EnqueueValidationError as exc:
        raise validation_error(exc, "policy.") from None
    shards = [
        {"shard": i, "pinned": bool(a["pinned"]), "settings": dict(a["settings"])}
        for i, a in enumerate(answers)
    ]
    return json_response(200, {"binding": binding, "shards": shards})


async def set_policy(request: Request) -> Response:
    """``POST /api/bindings/{binding}/policy``: change the body's fields and pin the settings on every shard."""
    api, env = api_of(request), env_of(request)
    binding = await _binding(request, api, env)
    patch = parse_policy(await request.body())
    return await _on_every_shard(api, env, binding, "configure", msgspec.to_builtins(patch))


async def reset_policy(request: Request) -> Response:
    """``POST /api/bindings/{binding}/policy/reset``: unpin, back to the code's settings on every shard."""
    api, env = api_of(request), env_of(request)
    binding = await _binding(request, api, env)
    return await _on_every_shard(api, env, binding, "reset_policy")
