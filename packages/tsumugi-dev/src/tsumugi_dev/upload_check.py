"""The deploy's refusal of an upload that cannot start: a module its code imports that nothing provides."""

from __future__ import annotations

from tsumugi_dev.upload_build import UploadBuild
from tsumugi_dev.upload_imports import missing_modules, provided_names
from tsumugi_dev.worker_source import DeployError

__all__ = ["refuse_incomplete_upload"]


def refuse_incomplete_upload(build: UploadBuild) -> None:
    """Raise DeployError naming each module ``build``'s entry imports (transitively) that would be missing on
    Cloudflare, and the module importing it; return when there is none (ADR-0113)."""
    source = build.source
    entry = source.main.relative_to(source.module_root).as_posix()
    provided = provided_names(r.name for r in build.resolution.third_party)
    missing = missing_modules(build.folder / "src", entry, provided)
    if not missing:
        return
    shown = "; ".join(f"{m.module!r} (imported by {m.importer}, line {m.line})" for m in missing)
    raise DeployError(
        f"{source.name}: the upload cannot start: {shown} is in neither the upload, the standard library, the "
        f"platform nor a requirement of {source.pyproject}; add the package that provides it to its "
        "[project] dependencies"
    )
