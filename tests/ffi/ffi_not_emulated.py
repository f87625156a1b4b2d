"""FFI cases whose real-Pyodide outcome the emulation does not reproduce, each with the reason (ADR-0103).

A listed case still runs in both worlds; its test then asserts that the outcomes differ, so an entry that the
emulation has come to match must be removed. Cases not listed must match exactly.
"""

from __future__ import annotations

NOT_EMULATED: dict[str, str] = {}
