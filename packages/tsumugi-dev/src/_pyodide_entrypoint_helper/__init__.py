# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""workerd's ``_pyodide_entrypoint_helper`` module (registered by python-entrypoint-helper.ts), emulated.

``cloudflareWorkersModule`` is ``cloudflare:workers`` (its ``env`` and ``waitUntil`` are the running
invocation's, set by the local runtime), ``doAnImport`` imports no JavaScript module (there is none
locally), ``patchWaitUntil`` is a no-op: the emulated ``waitUntil`` takes Python awaitables as they are.
"""

from typing import Any

from jsemu.entrypoint_helper import (
    cloudflareSocketsModule,
    cloudflareWorkersModule,
    doAnImport,
    patch_env_helper,
    patchWaitUntil,
    workerEntrypoint,
)

__all__ = [
    "cloudflareSocketsModule",
    "cloudflareWorkersModule",
    "doAnImport",
    "patchWaitUntil",
    "patch_env_helper",
    "workerEntrypoint",
]

_: Any = None
