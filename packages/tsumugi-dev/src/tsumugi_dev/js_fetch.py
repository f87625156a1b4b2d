"""The local runtime's hook on the global ``fetch`` (`jsemu.network`): each request is one subrequest."""

from __future__ import annotations

from jsemu.network import BEFORE_SEND

from tsumugi_dev.invocation import charge_subrequest

__all__ = ["install_fetch"]


def install_fetch() -> None:
    """Charge every outbound ``fetch`` to the calling invocation (idempotent)."""
    if charge_subrequest not in BEFORE_SEND:
        BEFORE_SEND.append(charge_subrequest)
