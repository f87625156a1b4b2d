# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""What workerd's entrypoint helper gives Python, and the invocation it describes (set by the runtime)."""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, ClassVar

from jsemu.core import MISSING, UNDEFINED, HostObject, JsCallable, js_error
from jsemu.objects import JsObject
from jsemu.promise import JsPromise

__all__ = [
    "CURRENT_ENV",
    "CURRENT_WAIT_UNTIL",
    "cloudflareSocketsModule",
    "cloudflareWorkersModule",
    "doAnImport",
    "patchWaitUntil",
    "patch_env_helper",
    "workerEntrypoint",
]

CURRENT_ENV: ContextVar[Any] = ContextVar("jsemu_current_env")
"""The running invocation's raw (JS) env: what ``cloudflare:workers``'s ``env`` is."""

CURRENT_WAIT_UNTIL: ContextVar[Any] = ContextVar("jsemu_current_wait_until")
"""The running invocation's ``waitUntil`` (a JS function)."""


class _CloudflareWorkers(HostObject):
    __slots__ = ()
    js_class: ClassVar[str] = "Module"

    @property
    def js_env(self) -> Any:
        env = CURRENT_ENV.get(MISSING)
        return UNDEFINED if env is MISSING else env

    def js_waitUntil(self, promise: Any) -> Any:
        wait_until = CURRENT_WAIT_UNTIL.get(None)
        if wait_until is None:
            raise js_error("Error", "waitUntil() can only be called while a request is being handled")
        return wait_until.js_call(promise)


cloudflareWorkersModule = _CloudflareWorkers()


def _no_sockets(*_: Any) -> Any:
    raise js_error("Error", "cloudflare:sockets connect() is not emulated by the local runtime")


cloudflareSocketsModule = JsObject({"connect": JsCallable(_no_sockets, name="connect")})
workerEntrypoint = JsObject({})


def doAnImport(module_name: Any) -> Any:
    """``import(module_name)``: there is no JavaScript module to import locally."""
    return JsPromise.rejected(
        js_error(
            "Error", f'No such module "{module_name}" (JavaScript modules do not exist in the local runtime)'
        )
    )


def patchWaitUntil(ctx: Any) -> None:
    """workerd makes ``ctx.waitUntil`` copy a Python future before the call returns; the emulation's
    ``waitUntil`` keeps the Python awaitable itself, so nothing is patched."""
    return None


def patch_env_helper(kwds: Any) -> Iterator[None]:
    """``workers.patch_env``: not emulated."""
    raise js_error("Error", "patch_env is not emulated by the local runtime")
    yield  # pragma: no cover
