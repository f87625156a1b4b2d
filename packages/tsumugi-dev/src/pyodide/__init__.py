# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""Pyodide's Python package as a Python Worker sees it, emulated on CPython for the local runtime.

Only what the Workers SDK and the runtime use: ``pyodide.ffi``, ``pyodide.http``, ``pyodide.code``
(``relaxed_call``) and the version Python Workers run (npm ``pyodide`` 0.28.2 with compatibility flag
``python_workers``).
"""

__version__ = "0.28.2"
