"""The one error the scaffolding commands raise: the message says what is wrong and where."""

from __future__ import annotations

__all__ = ["ScaffoldError"]


class ScaffoldError(Exception):
    """``tsumugi init`` / ``add-performer`` cannot go on; nothing was written when it is raised."""
