"""The order Workers deploy in: a Worker after every Worker its Service Bindings name (ADR-0040).

A Service Binding to a Worker that does not exist yet fails the deploy, so performers go first, then the
scheduler that binds to them, then producers that bind to the scheduler. Bindings to Workers outside the set
being deployed are taken to exist already. Ties keep the order given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tsumugi_dev.raw_config import objects_at
from tsumugi_dev.worker_source import DeployError

__all__ = ["bound_services", "deploy_order"]


def bound_services(raw: dict[str, Any]) -> list[str]:
    """The Worker names a parsed wrangler config's ``services`` bind to."""
    names = [entry.get("service") for entry in objects_at(raw, "services")]
    return [name for name in names if isinstance(name, str)]


def deploy_order(bindings: Mapping[str, Sequence[str]]) -> list[str]:
    """Worker names so that each comes after the Workers (of ``bindings``) it binds to.

    ``bindings`` maps each Worker, in the order given, to the names its Service Bindings target.
    """
    placed: list[str] = []
    remaining = list(bindings)
    while remaining:
        ready = [
            name
            for name in remaining
            if all(target in placed or target not in bindings or target == name for target in bindings[name])
        ]
        if not ready:
            raise DeployError(
                f"services: the Service Bindings of {', '.join(remaining)} form a cycle, so no deploy order "
                "puts every Worker after the Workers it binds to"
            )
        placed.extend(ready)
        remaining = [name for name in remaining if name not in ready]
    return placed
