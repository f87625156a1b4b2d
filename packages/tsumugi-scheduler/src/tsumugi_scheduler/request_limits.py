"""The largest request body the scheduler Worker takes (ADR-0065), in a module of its own so both the REST app
and the runtime adapter (which checks it before the body is read) import it without importing each other."""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_BODY_BYTES"]

MAX_BODY_BYTES: Final = 1024 * 1024
"""1 MiB: above a payload's 100 KiB cap (ADR-0016) with room for a bulk enqueue's envelope. Cloudflare itself
refuses only above 100 MB (Free/Pro plans)."""
