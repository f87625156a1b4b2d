"""A Python Worker as ``tsumugi deploy`` reads it: its wrangler config, its module root and its pyproject.

pywrangler takes the project from the ``pyproject.toml`` next to the wrangler config (workers-py 1.17.9,
``utils.check_wrangler_config``: both in one folder), and wrangler uploads the files under the module root, the
folder of ``main`` unless ``base_dir`` says otherwise.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec

from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.raw_config import object_at, strings_at

__all__ = ["DeployError", "WorkerSource", "read_worker_source"]


class DeployError(ValueError):
    """A Worker cannot be built or deployed as configured; the message names the file, the field and the rule."""


class WorkerSource(msgspec.Struct, frozen=True, kw_only=True):
    """One Worker to deploy, as its files say."""

    config_path: Path
    raw: dict[str, Any]
    """the wrangler config, parsed"""
    raw_text: str
    """the wrangler config as written (its comments name secrets)"""
    name: str
    main: Path
    module_root: Path
    pyproject: Path
    dependencies: tuple[str, ...]
    """``[project.dependencies]`` of the pyproject"""

    @property
    def directory(self) -> Path:
        """The folder of the wrangler config (relative paths in it start here)."""
        return self.config_path.parent


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        parsed: Any = tomllib.loads(text) if path.suffix == ".toml" else loads_jsonc(text)
    except ValueError as exc:
        raise DeployError(f"{path}: not a valid wrangler config ({exc})") from None
    if not isinstance(parsed, dict):
        raise DeployError(f"{path}: a wrangler config is an object at the top level")
    return object_at({"config": parsed}, "config")


def _field(path: Path, raw: dict[str, Any], field: str) -> str:
    value = raw.get(field)
    if not isinstance(value, str) or not value:
        raise DeployError(f"{path}: {field} is required (a non-empty string)")
    return value


def _dependencies(pyproject: Path) -> tuple[str, ...]:
    try:
        data = tomllib.loads(pyproject.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise DeployError(f"{pyproject}: not valid TOML ({exc})") from None
    dependencies = strings_at(object_at(data, "project"), "dependencies")
    if dependencies is None:
        raise DeployError(f"{pyproject}: [project.dependencies] must be a list of requirement strings")
    return tuple(dependencies)


def read_worker_source(config_path: Path) -> WorkerSource:
    """Read the Worker configured by ``config_path``; raise ``DeployError`` if it is not a Python Worker we can build."""
    config_path = config_path.resolve()
    if not config_path.is_file():
        raise DeployError(f"{config_path}: no such wrangler config")
    text = config_path.read_text()
    raw = _parse(config_path, text)
    name = _field(config_path, raw, "name")
    main_field = _field(config_path, raw, "main")
    if not main_field.endswith(".py"):
        raise DeployError(f"{config_path}: main must be a Python file (.py), got {main_field!r}")
    if "python_workers" not in (strings_at(raw, "compatibility_flags") or []):
        raise DeployError(f'{config_path}: compatibility_flags must include "python_workers"')
    main = (config_path.parent / main_field).resolve()
    if not main.is_file():
        raise DeployError(f"{config_path}: main {main_field!r} does not exist ({main})")
    base_dir: Any = raw.get("base_dir")
    module_root = (config_path.parent / base_dir).resolve() if isinstance(base_dir, str) else main.parent
    if not main.is_relative_to(module_root):
        raise DeployError(f"{config_path}: main {main_field!r} is outside base_dir {base_dir!r}")
    pyproject = config_path.parent / "pyproject.toml"
    if not pyproject.is_file():
        raise DeployError(
            f"{config_path}: no pyproject.toml next to it; pywrangler reads the Worker's packages from "
            "[project.dependencies] of a pyproject.toml in the wrangler config's folder"
        )
    return WorkerSource(
        config_path=config_path,
        raw=raw,
        raw_text=text,
        name=name,
        main=main,
        module_root=module_root,
        pyproject=pyproject,
        dependencies=_dependencies(pyproject),
    )
