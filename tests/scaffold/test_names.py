"""The names a scaffold derives (project, package, module) and the rules a performer's name must meet."""

from __future__ import annotations

import doctest

import pytest

from tsumugi_dev.scaffold import ScaffoldError
from tsumugi_dev.scaffold import names as names_module
from tsumugi_dev.scaffold.names import module_name, package_name, project_name, validate_performer_name


def test_the_doctests_hold() -> None:
    assert doctest.testmod(names_module).failed == 0


@pytest.mark.parametrize(
    ("folder", "expected"),
    [("photo-shop", "photo-shop"), ("My App_2", "my-app-2"), ("--jobs--", "jobs"), ("a" * 52, "a" * 52)],
)
def test_project_names_are_worker_name_prefixes(folder: str, expected: str) -> None:
    assert project_name(folder) == expected


@pytest.mark.parametrize(
    ("folder", "message"),
    [
        ("123", "must start with a letter"),
        ("---", "must start with a letter"),
        ("日本", "must start with a letter"),
        ("a" * 53, "must be at most 63 characters"),
    ],
)
def test_unusable_project_names_are_refused(folder: str, message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        project_name(folder)


def test_package_and_module_names() -> None:
    assert package_name("photo-shop") == "photo_shop_performers"
    assert [module_name(n) for n in ("Resize", "SendMail", "HTTPFetch", "resize", "V2Upload")] == [
        "resize",
        "send_mail",
        "http_fetch",
        "resize",
        "v2_upload",
    ]


@pytest.mark.parametrize("name", ["Resize", "resize", "SendMail", "Step2", "A_B"])
def test_good_performer_names(name: str) -> None:
    assert validate_performer_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("2Fast", "is not a binding name"),
        ("Re-size", "is not a binding name"),
        ("Größe", "is not a binding name"),
        ("", "is not a binding name"),
        ("Resize\n", "is not a binding name"),
        ("_Hidden", "must not start with _"),
        ("class", "is a Python keyword"),
        ("match", "is a Python keyword"),
        ("Import", "would live in module import.py, a Python keyword"),
        ("Default", "is taken by the Workers themselves"),
        ("JOB_SHARD", "is taken by the Workers themselves"),
        ("TSUMUGI_DB", "is taken by the Workers themselves"),
    ],
)
def test_bad_performer_names_are_refused_with_the_rule(name: str, message: str) -> None:
    with pytest.raises(ScaffoldError, match=message):
        validate_performer_name(name)
