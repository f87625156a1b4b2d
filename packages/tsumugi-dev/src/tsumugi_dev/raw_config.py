"""Typed reads of a parsed wrangler config (JSON values), for the deploy modules: wrong shapes read as empty.

wrangler validates the config itself (``wrangler deploy --dry-run``); these readers only keep the deploy's
own code from tripping over a shape it does not expect.
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["object_at", "objects_at", "strings_at"]


def object_at(raw: dict[str, Any], key: str) -> dict[str, Any]:
    """``raw[key]`` if it is an object, else ``{}``."""
    value = raw.get(key)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def objects_at(raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects in the list ``raw[key]`` (other items and other shapes left out)."""
    value = raw.get(key)
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [cast(dict[str, Any], item) for item in items if isinstance(item, dict)]


def strings_at(raw: dict[str, Any], key: str) -> list[str] | None:
    """``raw[key]`` if it is a list of strings (``[]`` when absent), else None."""
    value = raw.get(key, [])
    items = cast(list[Any], value) if isinstance(value, list) else None
    if items is None or not all(isinstance(item, str) for item in items):
        return None
    return cast(list[str], items)
