"""Whether a requirement's environment marker leaves it out of a Worker's upload (ADR-0107).

Python Workers run on Pyodide, where ``sys_platform`` is ``"emscripten"`` and ``platform_system`` is
``"Emscripten"`` (PEP 508 values as Pyodide sets them; pywrangler resolves a Worker's requirements for that
interpreter). A requirement marked ``sys_platform != "emscripten"`` (tsumugi-client's httpx: its HTTP client is
for programs outside Workers) is therefore not installed in an upload, and the deploy leaves it out of the
generated pyproject so the upload shows it. Only a marker that is one such comparison is read here; any other
marker is left to pywrangler, as before.

Example:
    >>> excluded_on_pyodide("sys_platform != 'emscripten'"), excluded_on_pyodide('python_version < "3.12"')
    (True, False)
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["PYODIDE_PLATFORM", "excluded_on_pyodide"]

PYODIDE_PLATFORM: Final = {"sys_platform": "emscripten", "platform_system": "Emscripten"}
"""The platform markers' values on Pyodide."""
_COMPARISON: Final = re.compile(r"""^\s*(sys_platform|platform_system)\s*(==|!=)\s*(['"])([^'"]*)\3\s*$""")


def excluded_on_pyodide(marker: str) -> bool:
    """True when ``marker`` is one platform comparison that is false on Pyodide."""
    found = _COMPARISON.match(marker)
    if found is None:
        return False
    name, operator, _, value = found.groups()
    return (PYODIDE_PLATFORM[name] == value) != (operator == "==")
