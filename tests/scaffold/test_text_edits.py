"""The two editors behind add-performer: an item after a container's last one, in the container's style."""

from __future__ import annotations

import ast

import pytest

from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.scaffold.jsonc_edit import JsoncEditError, append, checked_append, locate
from tsumugi_dev.scaffold.python_edit import PythonEditError, append_to_list, insert_line_after, parse_module


def _append_jsonc(text: str, item: str = "3") -> str:
    root = locate(text)
    node = root.member("a") if root.kind == "object" else root
    assert node is not None
    return append(text, node, item)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": [1, 2]}', '{"a": [1, 2, 3]}'),
        ('{"a": [1, 2,]}', '{"a": [1, 2, 3,]}'),
        ('{"a": []}', '{"a": [3]}'),
        ('{"a": [ /* none */ ]}', '{"a": [3 /* none */ ]}'),
        (
            '{\n  "a": [\n    1,\n    2, // two\n  ],\n}',
            '{\n  "a": [\n    1,\n    2, // two\n    3,\n  ],\n}',
        ),
        (
            '{\n  "a": [\n    1,\n    2 // two, "," and ]\n  ]\n}',
            '{\n  "a": [\n    1,\n    2, // two, "," and ]\n    3\n  ]\n}',
        ),
        ('{\n  "a": [\n    // nothing yet\n  ],\n}', '{\n  "a": [\n    3,\n    // nothing yet\n  ],\n}'),
        ('{\n  "a": [\n    "x/*y*/"\n  ]\n}', '{\n  "a": [\n    "x/*y*/",\n    3\n  ]\n}'),
    ],
)
def test_jsonc_append_follows_the_containers_style(text: str, expected: str) -> None:
    edited = _append_jsonc(text)
    assert edited == expected
    assert loads_jsonc(edited)["a"][-1] == 3


def test_jsonc_append_a_member_to_an_object() -> None:
    text = '{\n  "name": "w", // the name\n  /* more */\n}\n'
    edited = append(text, locate(text), '"b": [1]')
    assert edited == '{\n  "name": "w", // the name\n  "b": [1],\n  /* more */\n}\n'
    assert loads_jsonc(edited) == {"name": "w", "b": [1]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": "open}', "unterminated string"),
        ('{"a": 1 /* open', "unterminated comment"),
        ('{"a": 1} 2', "unexpected text after the value"),
        ('{"a" 1}', "expected ':'"),
        ('{"a": 1', "unexpected end of text"),
        ('{"a": ]', "unexpected ']'"),
    ],
)
def test_locate_refuses_what_is_not_jsonc(text: str, message: str) -> None:
    with pytest.raises(JsoncEditError, match=message):
        locate(text)


def test_checked_append_refuses_a_result_other_than_meant() -> None:
    text = '{"a": [1]}'

    def expect(parsed: object) -> None:
        if parsed != {"a": [1, 2]}:
            raise JsoncEditError("not what was meant")

    assert checked_append(text, locate(text).items[0], "2", expect, "w.jsonc") == '{"a": [1, 2]}'
    with pytest.raises(JsoncEditError, match="not what was meant"):
        checked_append(text, locate(text).items[0], "3", expect, "w.jsonc")
    with pytest.raises(JsoncEditError, match=r"w\.jsonc: the edit would break the file"):
        checked_append(text, locate(text).items[0], "3 4", expect, "w.jsonc")
    with pytest.raises(JsoncEditError, match="cannot append to a scalar"):
        append(text, locate(text).items[0].items[0], "2")


def _list(source: str) -> ast.List:
    (node,) = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.List)]
    return node


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('X = ["a", "b"]\n', 'X = ["a", "b", "c"]\n'),
        ('X = ["a",]  # note\n', 'X = ["a", "c",]  # note\n'),
        ("X = []\n", 'X = ["c"]\n'),
        (
            'X = f(\n    p=[\n        "a",  # first\n    ],\n)\n',
            'X = f(\n    p=[\n        "a",  # first\n        "c",\n    ],\n)\n',
        ),
        ('X = [\n    "a"  # no comma\n]\n', 'X = [\n    "a",  # no comma\n    "c"\n]\n'),
        ('# é\nX = ["é", "ü"]  # ß\n', '# é\nX = ["é", "ü", "c"]  # ß\n'),
    ],
)
def test_python_append_follows_the_lists_style(source: str, expected: str) -> None:
    assert append_to_list(source, _list(source), '"c"', "m.py") == expected


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("X = [  # empty\n]\n", "an empty list with comments; add the item by hand"),
        ('X = [("a")]\n', "last item is not followed by just a comma and ]"),
    ],
)
def test_python_append_refuses_shapes_it_cannot_follow(source: str, message: str) -> None:
    with pytest.raises(PythonEditError, match=f"m.py: line 1: .*{message}"):
        append_to_list(source, _list(source), '"c"', "m.py")


def test_insert_line_after_keeps_the_statements_indent_and_comment() -> None:
    source = "import a  # why\nx = 1"
    tree = parse_module(source, "m.py")
    assert insert_line_after(source, tree.body[0], "import b") == "import a  # why\nimport b\nx = 1"
    assert insert_line_after(source, tree.body[1], "y = 2") == "import a  # why\nx = 1\ny = 2\n"
    with pytest.raises(PythonEditError, match=r"m.py: is not valid Python \(line 1"):
        parse_module("def (", "m.py")
