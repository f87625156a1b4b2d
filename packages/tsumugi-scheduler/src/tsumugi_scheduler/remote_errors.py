"""Errors caught from RPC calls, as Cloudflare delivers them: a JS error whose message may be a Python traceback.

On Cloudflare a failed RPC call raises Pyodide's ``JsException`` with ``name`` and ``message``. An exception
raised by Python code on the other side arrives as ``PythonError`` whose message is the whole traceback,
ending with ``<qualified type>: <message>``; workerd's own errors keep their JS name (``TypeError``,
``DataCloneError``). A missing method on a Python entrypoint or Durable Object is workerd's ``TypeError:
Method <name> does not exist`` (src/pyodide/python-entrypoint-helper.ts); on a JavaScript one it is
``The RPC receiver does not implement the method "<name>".`` (src/workerd/api/worker-rpc.c++). ADR-0042.
"""

from __future__ import annotations

from tsumugi_core.remote_calls import is_missing_method

__all__ = ["error_text", "is_missing_method"]

_PYTHON_ERROR = "PythonError"


def _js_error(error: BaseException) -> tuple[str, str] | None:
    name, message = getattr(error, "name", None), getattr(error, "message", None)
    return (name, message) if isinstance(name, str) and isinstance(message, str) else None


def error_text(error: BaseException) -> str:
    """``<Type>: <message>`` first (what people read, and what the shard keeps), then any traceback."""
    js = _js_error(error)
    if js is None:
        return f"{type(error).__name__}: {error}"
    name, message = js
    if name == _PYTHON_ERROR:
        lines = [line for line in message.splitlines() if line.strip()]
        if lines:
            return f"{lines[-1]}\n{message.rstrip()}"
    return f"{name}: {message}"
