"""``tsumugi add-performer``: the four edits, their idempotence, and every refusal (nothing written then)."""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

import pytest

from tsumugi_dev.cli import main
from tsumugi_dev.config import load_config
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.scaffold import InitResult, ScaffoldError, add_performer

SCHEDULER_ENTRY = "scheduler/src/entry.py"
SCHEDULER_CONFIG = "scheduler/wrangler.jsonc"
PERFORMERS_ENTRY = "performers/src/entry.py"
MODULE = "performers/src/my_app_performers/resize.py"


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _only_added_lines(before: str, after: str) -> list[str]:
    """The lines ``after`` adds to ``before``; fails if any line of ``before`` was changed or removed."""
    added: list[str] = []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        assert not line.startswith("- "), f"a line was changed or removed: {line!r}"
        if line.startswith("+ "):
            added.append(line[2:])
    return added


def _registered(root: Path) -> list[str]:
    tree = ast.parse((root / SCHEDULER_ENTRY).read_text())
    (call,) = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "define_tsumugi"
    ]
    (value,) = [k.value for k in call.keywords if k.arg == "performers"]
    assert isinstance(value, ast.List)
    return [str(e.value) for e in value.elts if isinstance(e, ast.Constant)]


def test_the_four_edits_keep_everything_else(project: InitResult) -> None:
    root = project.root
    before = _snapshot(root)
    added = add_performer(root, "Resize")
    assert set(added.changed) == {
        root / MODULE,
        root / PERFORMERS_ENTRY,
        root / SCHEDULER_CONFIG,
        root / SCHEDULER_ENTRY,
    }
    after = _snapshot(root)
    assert _only_added_lines(before[PERFORMERS_ENTRY].decode(), after[PERFORMERS_ENTRY].decode()) == [
        "from my_app_performers.resize import Resize as ResizePerformer",
        "Resize = performer_entrypoint(WorkerEntrypoint, ResizePerformer)",
    ]
    assert _only_added_lines(before[SCHEDULER_CONFIG].decode(), after[SCHEDULER_CONFIG].decode()) == [
        '    { "binding": "Resize", "service": "my-app-performers", "entrypoint": "Resize" },'
    ]
    assert _only_added_lines(before[SCHEDULER_ENTRY].decode(), after[SCHEDULER_ENTRY].decode()) == [
        '        "Resize",'
    ]
    assert _registered(root) == ["Hello", "Resize"]
    services = load_config(root / SCHEDULER_CONFIG).services
    assert [(s.binding, s.service, s.entrypoint) for s in services][-1] == (
        "Resize",
        "my-app-performers",
        "Resize",
    )
    module = ast.parse(after[MODULE].decode())
    assert [n.name for n in module.body if isinstance(n, ast.ClassDef)] == ["Resize"]
    assert {k for k in after if k not in before} == {MODULE}


def test_a_second_run_changes_nothing_and_says_so(
    project: InitResult, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project.root)
    with pytest.raises(SystemExit) as first:
        main(["add-performer", "Resize"])
    assert first.value.code == 0
    assert "added Resize" in capsys.readouterr().out
    before = _snapshot(project.root)
    with pytest.raises(SystemExit) as second:
        main(["add-performer", "Resize"])
    assert second.value.code == 0
    assert "Resize is already there; nothing changed" in capsys.readouterr().out
    assert _snapshot(project.root) == before
    assert add_performer(project.root, "Resize").changed == ()


def test_a_bad_name_exits_2_and_writes_nothing(
    project: InitResult, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot(project.root)
    monkeypatch.chdir(project.root)
    with pytest.raises(SystemExit) as exited:
        main(["add-performer", "Re-size"])
    assert exited.value.code == 2
    assert "performer name 'Re-size' is not a binding name" in capsys.readouterr().err
    assert _snapshot(project.root) == before


def test_a_user_written_module_is_kept_and_the_rest_added(project: InitResult) -> None:
    module = project.root / MODULE
    module.write_text("# mine\nclass Resize:\n    pass\n")
    added = add_performer(project.root, "Resize")
    assert module.read_text() == "# mine\nclass Resize:\n    pass\n"
    assert module not in added.changed
    assert len(added.changed) == 3


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda r: (r / MODULE).write_text("class Other:\n    pass\n"),
            "does not define class Resize; refusing to overwrite",
        ),
        (lambda r: (r / MODULE).write_text("class Resize(:\n"), "is not valid Python"),
        (lambda r: (r / PERFORMERS_ENTRY).unlink(), "the performers Worker's entry module is missing"),
        (lambda r: (r / SCHEDULER_ENTRY).unlink(), "the scheduler Worker's entry module is missing"),
        (lambda r: (r / "pyproject.toml").unlink(), r"no \[tool.tsumugi\] workers list"),
        (lambda r: (r / SCHEDULER_CONFIG).unlink(), "which is not a file"),
        (
            lambda r: _replace(r / PERFORMERS_ENTRY, "Hello = performer", "Resize = 1\nHello = performer"),
            "already defines Resize; refusing to add it",
        ),
        (
            lambda r: _replace(
                r / PERFORMERS_ENTRY, "from tsumugi_performer.entrypoint import performer_entrypoint\n", ""
            ),
            "does not import performer_entrypoint",
        ),
        (
            lambda r: _replace(
                r / SCHEDULER_CONFIG,
                '"entrypoint": "Hello" },',
                '"entrypoint": "Hello" },\n    { "binding": "Resize", "service": "elsewhere" },',
            ),
            "services already binds Resize as .*elsewhere.*; refusing to change it",
        ),
        (
            lambda r: _replace(
                r / SCHEDULER_ENTRY, 'performers=[\n        "Hello",\n    ],', "performers=NAMES,"
            ),
            r"define_tsumugi\(performers=...\) is not a list literal; add the name by hand",
        ),
        (
            lambda r: _replace(
                r / SCHEDULER_ENTRY,
                "TSUMUGI = define_tsumugi(",
                "OTHER = define_tsumugi()\nTSUMUGI = define_tsumugi(",
            ),
            r"expected one define_tsumugi\(...\) call, found 2",
        ),
        (
            lambda r: _replace(r / SCHEDULER_ENTRY, '        "Hello",\n', '        ("Hello"),\n'),
            "the list's last item is not followed by just a comma and ]",
        ),
        (
            lambda r: (r / "performers/src/my_app_performers/__init__.py").unlink(),
            "expected one performers package",
        ),
        (lambda r: _replace(r / SCHEDULER_CONFIG, '"triggers"', '"services": 3, "triggers"'), "services"),
        (lambda r: _replace(r / SCHEDULER_CONFIG, '"triggers"', '"triggers" "'), "not valid jsonc"),
    ],
)
def test_refusals_name_the_file_and_write_nothing(project: InitResult, edit, message: str) -> None:
    edit(project.root)
    before = _snapshot(project.root)
    with pytest.raises(ScaffoldError, match=message):
        add_performer(project.root, "Resize")
    assert _snapshot(project.root) == before


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, text)
    path.write_text(text.replace(old, new, 1))


def test_a_config_without_services_gets_a_services_list(project: InitResult) -> None:
    config = project.root / SCHEDULER_CONFIG
    _replace(
        config, '    { "binding": "Hello", "service": "my-app-performers", "entrypoint": "Hello" },\n', ""
    )
    data = loads_jsonc(config.read_text())
    assert data["services"] == []
    with pytest.raises(ScaffoldError, match="point to 0 of the project's Workers; pass --worker DIR"):
        add_performer(project.root, "Resize")
    add_performer(project.root, "Resize", worker=project.root / "performers")
    assert loads_jsonc(config.read_text())["services"] == [
        {"binding": "Resize", "service": "my-app-performers", "entrypoint": "Resize"}
    ]


def test_no_services_member_at_all_is_added_with_the_binding(project: InitResult) -> None:
    config = project.root / SCHEDULER_CONFIG
    text = config.read_text()
    start = text.index("  // One binding per performer")
    end = text.index("  // The read-model sweep")
    config.write_text(text[:start] + text[end:])
    add_performer(project.root, "Resize", worker=project.root / "performers")
    data = loads_jsonc(config.read_text())
    assert data["services"] == [{"binding": "Resize", "service": "my-app-performers", "entrypoint": "Resize"}]
    assert data["triggers"] == {"crons": ["0 * * * *"]}


def test_a_definition_without_performers_accepts_any_binding_and_says_so(project: InitResult) -> None:
    _replace(project.root / SCHEDULER_ENTRY, 'performers=[\n        "Hello",\n    ],\n', "")
    added = add_performer(project.root, "Resize")
    assert project.root / SCHEDULER_ENTRY not in added.changed
    assert "lists no performers, so it accepts Resize already" in added.notes[0]


def test_the_list_style_is_kept(project: InitResult) -> None:
    entry = project.root / SCHEDULER_ENTRY
    _replace(entry, 'performers=[\n        "Hello",\n    ],', "performers=['Hello'],  # one line")
    add_performer(project.root, "Resize")
    assert "performers=['Hello', 'Resize'],  # one line" in entry.read_text()


def test_another_performers_worker_with_worker_dir(project: InitResult) -> None:
    media = project.root / "media"
    (media / "src" / "media_jobs").mkdir(parents=True)
    (media / "src" / "media_jobs" / "__init__.py").write_text("")
    (media / "wrangler.jsonc").write_text('{"name": "my-app-media", "main": "src/entry.py"}\n')
    (media / "src" / "entry.py").write_text(
        "from workers import WorkerEntrypoint\n\nfrom tsumugi_performer.entrypoint import performer_entrypoint\n"
    )
    add_performer(project.root, "Transcode", worker=media)
    assert (
        "from media_jobs.transcode import Transcode as TranscodePerformer\n\nTranscode = performer_entrypoint("
        in (media / "src" / "entry.py").read_text()
    )
    services = load_config(project.root / SCHEDULER_CONFIG).services
    assert (services[-1].binding, services[-1].service) == ("Transcode", "my-app-media")
    with pytest.raises(ScaffoldError, match=r"--worker .*nowhere: no wrangler config"):
        add_performer(project.root, "Other", worker=project.root / "nowhere")


def test_without_worker_the_bindings_must_point_to_one_worker(project: InitResult) -> None:
    _replace(
        project.root / SCHEDULER_CONFIG,
        '"entrypoint": "Hello" },',
        '"entrypoint": "Hello" },\n    { "binding": "Api", "service": "my-app-producer" },',
    )
    with pytest.raises(ScaffoldError, match="point to 2 of the project's Workers; pass --worker DIR"):
        add_performer(project.root, "Resize")


@pytest.mark.parametrize("name", ["SCHEDULER", "RUN"])
def test_a_name_the_scheduler_binds_itself_is_refused(
    project: InitResult, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    # A Service Binding of that name replaced the scheduler's own Durable Object binding in env.
    before = _snapshot(project.root)
    monkeypatch.chdir(project.root)
    with pytest.raises(SystemExit) as exited:
        main(["add-performer", name])
    assert exited.value.code == 2
    assert _snapshot(project.root) == before


def test_a_name_whose_module_is_a_package_of_the_project_is_refused(project: InitResult) -> None:
    # flows.py beside the flows/ package: the package wins the import, and the performers Worker broke.
    before = _snapshot(project.root)
    with pytest.raises(ScaffoldError, match=r"is a package of the same name as the module flows\.py"):
        add_performer(project.root, "Flows")
    assert _snapshot(project.root) == before
