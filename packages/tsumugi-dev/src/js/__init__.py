# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The ``js`` module as Pyodide gives it to a Python Worker: JavaScript's globals (``from js import Object``).

Emulated for the local runtime (see `jsemu`): the names the Workers SDK and the runtime use. A name with
no emulation raises ``AttributeError`` (``ImportError`` for ``from js import X``).
"""

from typing import Any

import jsemu.fetch_api
import jsemu.network  # noqa: F401 - registers fetch
from jsemu.builtins import GLOBALS
from jsemu.core import MISSING, to_python


def __getattr__(name: str) -> Any:
    value = GLOBALS.get(name, MISSING)
    if value is MISSING:
        raise AttributeError(name)  # Pyodide's text: the name alone
    return to_python(value)
