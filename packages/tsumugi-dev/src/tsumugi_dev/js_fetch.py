"""The local runtime's hooks on the global ``fetch`` (`jsemu.network`).

Each request is one subrequest of the calling invocation, and holds one of its six simultaneous connections
until the response headers are in (a seventh waits for one of them, ADR-0102).
"""

from __future__ import annotations

from jsemu.network import BEFORE_SEND, CONNECTIONS

from tsumugi_dev.invocation import charge_subrequest, current_connections

__all__ = ["install_fetch"]


def install_fetch() -> None:
    """Charge every outbound ``fetch`` to the calling invocation, and its connections (idempotent)."""
    if charge_subrequest not in BEFORE_SEND:
        BEFORE_SEND.append(charge_subrequest)
    if current_connections not in CONNECTIONS:
        CONNECTIONS.append(current_connections)
