# pyright: basic
# (A model of JavaScript's dynamic values: checked in basic mode, not strict; ADR-0097.)
"""The JavaScript side of Python Workers, emulated on CPython for the local runtime.

What the Workers SDK imports (``js``, ``pyodide.ffi``, ``pyodide.http``, ``_pyodide_entrypoint_helper``,
``_cloudflare_compat_flags``) is built on this package: a JS value model (`jsemu.core`), ordinary objects
(`jsemu.objects`), conversions (`jsemu.convert`), promises, JSON, the globals and the Fetch API.
"""
