"""Finding a performer by binding name: an export of this Worker first (``ctx.exports``), else a Service Binding.

The consumer calls the performer it finds; the payload-schema cache asks the same performer for its schema.
Both containers may be a mapping (tests, the local runtime) or an object with attributes (Cloudflare's env).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["find_performer"]


def _member(container: Any, name: str) -> Any:
    if container is None:
        return None
    if isinstance(container, Mapping):
        mapping: Mapping[str, Any] = container  # pyright: ignore[reportUnknownVariableType]
        return mapping.get(name)
    try:
        return getattr(container, name, None)
    except Exception:
        return None


def find_performer(binding: str, env: Any, exports: Any) -> Any:
    """The performer named ``binding``: a local export first, else the env's Service Binding; None when neither."""
    return _member(exports, binding) or _member(env, binding)
