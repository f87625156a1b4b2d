"""Whether a failed RPC call failed because its target lacks the method (ADR-0042).

A missing method on a Python entrypoint or Durable Object is workerd's ``TypeError: Method <name> does not
exist`` (src/pyodide/python-entrypoint-helper.ts); on a JavaScript one it is ``The RPC receiver does not
implement the method "<name>".`` (src/workerd/api/worker-rpc.c++). An exception the target's own Python code
raised arrives as a JS error named ``PythonError`` whose message is the traceback: quoting that text does not
make the method missing. Callers use it to fall back to an older method of an older deployment.

Example:
    >>> is_missing_method(TypeError("Method enqueue_json does not exist"), "enqueue_json")
    True
"""

from __future__ import annotations

__all__ = ["is_missing_method"]


def is_missing_method(error: BaseException, method: str) -> bool:
    """True when ``error`` says the target has no RPC method ``method`` (Python or JavaScript target)."""
    name = getattr(error, "name", None)
    if name == "PythonError" and isinstance(getattr(error, "message", None), str):
        return False  # raised by the target's own code: the method exists
    text = str(error)
    return f"Method {method} does not exist" in text or f'does not implement the method "{method}"' in text
