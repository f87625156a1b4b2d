"""The nesting bound counts objects as arrays do, and counts a Struct as the object it encodes to."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from tsumugi_core.json_path import InvalidValueError
from tsumugi_core.portable import MAX_NESTING, check_portable

RULE = "must be nested at most 64 levels deep (arrays and objects)"


class Box(msgspec.Struct):
    v: Any


def objects(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


def arrays(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def refusal(value: Any) -> tuple[str, str]:
    with pytest.raises(InvalidValueError) as caught:
        check_portable(value)
    return caught.value.path("payload"), caught.value.rule


def test_the_bound_is_64_levels() -> None:
    assert MAX_NESTING == 64


def test_objects_nested_64_levels_pass_and_65_are_refused_at_the_deepest() -> None:
    check_portable(objects(64))
    assert refusal(objects(65)) == ("payload" + ".a" * 64, RULE)


def test_objects_and_arrays_count_alike_when_mixed() -> None:
    check_portable({"a": arrays(63)})
    assert refusal({"a": arrays(64)}) == ("payload.a" + "[0]" * 63, RULE)


def test_a_struct_counts_as_one_object_level() -> None:
    check_portable(Box(v=arrays(63)))
    assert refusal(Box(v=arrays(64))) == ("payload.v" + "[0]" * 63, RULE)
