"""What is vendored from the installed distributions and what pywrangler fetches."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

import tsumugi_client
import tsumugi_core
from tsumugi_dev.pyodide_markers import excluded_on_pyodide
from tsumugi_dev.vendoring import DependencyError, parse_requirement, resolve_dependencies


def test_requirements_are_parsed_for_name_pin_and_marker() -> None:
    r = parse_requirement("Pydantic_Core == 2.27.2 ; python_version >= '3.11'")
    assert (r.name, r.pin, r.marker) == ("pydantic-core", "2.27.2", "python_version >= '3.11'")
    assert parse_requirement("httpx[http2]>=0.28").pin is None
    assert parse_requirement("msgspec[yaml]==0.19.0").pin == "0.19.0"
    with pytest.raises(DependencyError, match="no package name"):
        parse_requirement("==1.0")


def test_tsumugi_packages_are_vendored_from_where_they_are_installed_and_followed() -> None:
    resolution = resolve_dependencies(["tsumugi-client"], owner="pyproject.toml")
    by_name = {p.import_name: p for p in resolution.vendored}
    assert set(by_name) == {"tsumugi_client", "tsumugi_core"}  # core through the client's requirements
    assert by_name["tsumugi_client"].source == Path(tsumugi_client.__file__).parent
    assert by_name["tsumugi_core"].source == Path(tsumugi_core.__file__).parent
    assert by_name["tsumugi_core"].version == metadata.version("tsumugi-core")
    # tzdata: the zone data schedules read (ADR-0078), a package Pyodide ships. The client's httpx is required
    # only off Pyodide (sys_platform != 'emscripten'), so no upload fetches it (ADR-0107).
    assert [r.text for r in resolution.third_party] == ["msgspec==0.19.0", "tzdata==2025.2"]


@pytest.mark.parametrize(
    ("marker", "fetched"),
    [
        ("sys_platform != 'emscripten'", False),
        ('sys_platform == "emscripten"', True),
        ("platform_system != 'Emscripten'", False),
        ("platform_system == 'Linux'", False),
        ("sys_platform == 'linux'", False),
        ('python_version < "3.14"', True),  # other markers are pywrangler's to read
        ("extra == 'cli'", False),  # extras are never requested
    ],
)
def test_a_requirement_a_platform_marker_keeps_off_pyodide_is_left_to_nobody(
    marker: str, fetched: bool
) -> None:
    assert excluded_on_pyodide(marker) is (not fetched and "extra" not in marker)
    resolution = resolve_dependencies([f"msgspec==0.19.0; {marker}"], owner="pyproject.toml")
    assert [r.name for r in resolution.third_party] == (["msgspec"] if fetched else [])


def test_a_local_install_is_vendored_and_a_registry_package_is_not() -> None:
    # tsumugi-examples is installed from its folder (PEP 610 dir_info); pydantic from the index.
    resolution = resolve_dependencies(["tsumugi-examples", "pydantic==2.10.6"], owner="pyproject.toml")
    assert "tsumugi_examples" in {p.import_name for p in resolution.vendored}
    assert "pydantic" in {r.name for r in resolution.third_party}
    assert "pydantic" not in {p.import_name for p in resolution.vendored}


def test_a_pin_the_installed_copy_does_not_match_is_an_error() -> None:
    installed = metadata.version("tsumugi-core")
    with pytest.raises(DependencyError, match=rf"version {installed} is installed.*install 9\.9\.9"):
        resolve_dependencies(["tsumugi-core==9.9.9"], owner="w/pyproject.toml")


def test_a_tsumugi_package_that_is_not_installed_cannot_be_vendored() -> None:
    with pytest.raises(DependencyError, match=r"'tsumugi-nonexistent' of w/pyproject.toml: not installed"):
        resolve_dependencies(["tsumugi-nonexistent"], owner="w/pyproject.toml")


def test_two_pins_of_one_third_party_package_are_an_error() -> None:
    with pytest.raises(DependencyError, match=r"msgspec: pinned to 0\.18\.0 and to 0\.19\.0"):
        resolve_dependencies(["msgspec==0.18.0", "tsumugi-core"], owner="pyproject.toml")


def test_requirements_only_for_an_extra_are_not_followed() -> None:
    resolution = resolve_dependencies(["colorama ; extra == 'color'"], owner="pyproject.toml")
    assert resolution.third_party == ()
    assert resolution.vendored == ()


def test_a_wheel_install_is_found_through_its_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As in an `init`ed project, where tsumugi-* come from an index as wheels: the RECORD names the files,
    # here under an import name unlike the distribution's.
    site = tmp_path / "site"
    (site / "jobs_lib").mkdir(parents=True)
    (site / "jobs_lib" / "__init__.py").write_text("")
    (site / "jobs_lib" / "assets.txt").write_text("data")
    info = site / "tsumugi_wheeled-2.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: tsumugi-wheeled\nVersion: 2.0.0\nRequires-Dist: msgspec==0.19.0\n"
    )
    (info / "RECORD").write_text(
        "jobs_lib/__init__.py,,\njobs_lib/assets.txt,,\n../../bin/tool,,\n"
        "tsumugi_wheeled-2.0.0.dist-info/METADATA,,\ntsumugi_wheeled-2.0.0.dist-info/RECORD,,\n"
    )
    monkeypatch.syspath_prepend(str(site))
    resolution = resolve_dependencies(["tsumugi-wheeled==2.0.0"], owner="pyproject.toml")
    (package,) = resolution.vendored
    assert (package.import_name, package.source, package.version) == ("jobs_lib", site / "jobs_lib", "2.0.0")
    assert [r.text for r in resolution.third_party] == ["msgspec==0.19.0"]
