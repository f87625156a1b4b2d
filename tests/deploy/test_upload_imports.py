"""The import walk the upload tests rely on finds what is missing (so their passing means something)."""

from __future__ import annotations

from pathlib import Path

from tests.deploy.upload_imports import reached_modules, walk_imports


def test_the_walk_follows_imports_and_reports_missing_modules(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "entry.py").write_text("import json\nfrom pkg import thing\nimport msgspec\n")
    (tmp_path / "pkg" / "__init__.py").write_text("from .sub import helper\nthing = 1\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import never_loaded\n"
        "def f():\n    from pkg import gone\n"
    )
    (tmp_path / "pkg" / "sub" / "helper.py").write_text("from ..other import x\n")
    outside, missing = walk_imports(tmp_path, "entry.py")
    assert outside == {"json", "msgspec", "typing"}
    # pkg.gone may be an attribute of pkg (it is not, but only running it would tell); pkg.other is a module.
    assert missing == {"pkg.other"}


def test_the_walk_reaches_modules_imported_inside_packages(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "entry.py").write_text("from pkg.a import A\n")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from . import b\n")
    (tmp_path / "pkg" / "b.py").write_text("")
    (tmp_path / "pkg" / "unused.py").write_text("")
    assert reached_modules(tmp_path, "entry.py") == {"entry", "pkg", "pkg.a", "pkg.b"}
