# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""``pyodide.code.relaxed_call``: call a function with only the positional arguments it accepts."""

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["relaxed_call"]


def relaxed_call(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``func`` dropping the positional arguments past what it takes (workerd calls handlers so)."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return func(*args, **kwargs)
    params = list(signature.parameters.values())
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return func(*args, **kwargs)
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        names = {p.name for p in params}
        kwargs = {k: v for k, v in kwargs.items() if k in names}
    return func(*args[: len(positional)], **kwargs)
