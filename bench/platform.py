"""What a job costs on Cloudflare: ``uv run python bench/platform.py [--jobs N] [--quick]``.

The benchmark itself is bench/platform_cost.py (its docstring says what it measures). This file has the name
issue 27 gave the benchmark, which is also the standard library's ``platform``: a script in this folder has
the folder first on its path, so ``import platform`` (uuid, msgspec and others do it) finds this file.
Imported under that name, it loads the standard library's module in its place and does nothing else.
"""

import sys

if __name__ == "__main__":
    from platform_cost import cli

    cli()
else:
    import importlib.util
    import sysconfig
    from pathlib import Path

    _spec = importlib.util.spec_from_file_location(
        "platform", Path(sysconfig.get_paths()["stdlib"]) / "platform.py"
    )
    if _spec is None or _spec.loader is None:
        raise ImportError("the standard library's platform module was not found")
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["platform"] = _module  # what `import platform` hands back once this file has run
    _spec.loader.exec_module(_module)
