"""The imitation's RPC conversions decide like the real SDK's (``workers-runtime-sdk``, pinned; ADR-0041).

Each value of the corpus crosses twice: through the real ``python_to_rpc`` -> workerd's serialiser ->
``python_from_rpc`` (the wheel's own code over the small JS model in ``sdk_model``), and through the local
runtime's copy (``workers.rpc.transfer`` and its fast path ``tsumugi_dev.rpc_calls.rpc_copy``). Both must
refuse the same values (with the SDK's error text at the end of ours, which prefixes the path of the
offending part) and deliver equal values otherwise.

Not compared here, deliberately:
- Request, Response, Blob, File, FormData: the real ones wrap JS Fetch API objects this model does not have.
- The representation of numbers and buffers (int vs float, bytes vs memoryview): Pyodide's conversions, not
  the SDK's; values are compared with ``==``, under which they agree.
- dict keys that are floats or tuples (their JS property names follow Number/Array ``toString``), classes,
  frozensets, generators and subclasses of str/int: none crosses in this codebase.
"""

from __future__ import annotations

import datetime
import inspect
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
import sdk_model
from workers.rpc import JsDict, from_js, python_from_rpc, transfer

from tsumugi_dev.rpc_calls import rpc_copy


@pytest.fixture(scope="module")
def real() -> ModuleType:
    return sdk_model.load_real_rpc()


@dataclass(frozen=True)
class Refused:
    message: str


@dataclass(frozen=True)
class Unserialisable:
    """The SDK let it through as a ``PyProxy``; workerd's serialiser refuses it."""

    reason: str


@dataclass(frozen=True)
class Received:
    value: Any


Outcome = Refused | Unserialisable | Received


def real_outcome(rpc: ModuleType, value: Any) -> Outcome:
    try:
        sent = rpc.python_to_rpc(value)
    except TypeError as exc:
        return Refused(str(exc))
    try:
        cloned = sdk_model.clone(sent)
    except sdk_model.DataCloneError as exc:
        return Unserialisable(str(exc))
    return Received(rpc.python_from_rpc(cloned))


COPIES: dict[str, Callable[[Any], Any]] = {
    "transfer": transfer,
    "rpc_copy": lambda value: rpc_copy(value, lambda: "value"),
}


def our_outcome(copy: Callable[[Any], Any], value: Any) -> Outcome:
    try:
        return Received(copy(value))
    except TypeError as exc:
        return Refused(str(exc))


class Plain:
    """An object with no conversion."""


class Pending:
    """An awaitable that is not a coroutine."""

    def __await__(self) -> Generator[None, None, None]:
        yield


async def _work() -> int:
    return 1


def _handler(x: int) -> int:
    return x


DATE = datetime.datetime(2026, 1, 2, 3, 4, 5, 999)  # 5.000999 s: the JS Date keeps 5.000
AWARE = datetime.datetime(2026, 1, 2, 3, 4, 5, 123_456, tzinfo=datetime.UTC)

CORPUS: dict[str, Callable[[], Any]] = {
    "none": lambda: None,
    "str": lambda: "text",
    "int": lambda: 42,
    "big int": lambda: 2**60,
    "float": lambda: 1.5,
    "integral float": lambda: 2.0,
    "bool": lambda: True,
    "bytes": lambda: b"\x00\xff",
    "dict": lambda: {"a": 1, "b": None, "c": [1, {"d": None}], "e": {"f": "g"}},
    "dict with int keys": lambda: {1: "a", 2: "b"},
    "dict with bool and None keys": lambda: {True: 1, False: 2, None: 3},
    "list": lambda: [1, "x", None, [2, None]],
    "set": lambda: {1, 2, 3},
    "tuple": lambda: (1, 2),
    "bytearray": lambda: bytearray(b"ab"),
    "tuple in list": lambda: [1, (2, 3)],
    "tuple in dict": lambda: {"k": (1,)},
    "tuple in set": lambda: {(1, 2)},
    "bytearray in dict in list": lambda: [{"k": bytearray(b"x")}],
    "datetime": lambda: DATE,
    "aware datetime": lambda: AWARE,
    "datetime in dict": lambda: {"at": DATE},
    "exception": lambda: ValueError("boom"),
    "exception without message": lambda: KeyError(),
    "exception in list": lambda: [RuntimeError("x")],
    "coroutine": _work,
    "coroutine in dict": lambda: {"later": _work()},
    "awaitable": Pending,
    "function": lambda: _handler,
    "lambda": lambda: lambda: None,
    "bound method": lambda: Plain().__repr__,
    "plain object": Plain,
    "plain object in list": lambda: [Plain()],
}


def _parts(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from _parts(item)
    elif isinstance(value, list | tuple | set):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from _parts(item)


@pytest.fixture
def make() -> Iterator[Callable[[str], Any]]:
    """Fresh corpus values; coroutines that never ran are closed afterwards."""
    made: list[Any] = []

    def build(name: str) -> Any:
        made.append(CORPUS[name]())
        return made[-1]

    yield build
    for value in made:
        for part in _parts(value):
            if inspect.iscoroutine(part):
                part.close()


def assert_same_value(real: Any, ours: Any, path: str = "value") -> None:
    if type(real).__name__ == "JsDict":
        assert isinstance(ours, JsDict), f"{path}: the SDK delivers a JsDict, we {type(ours).__name__}"
        assert sorted(real) == sorted(ours), f"{path}: keys {sorted(real)} != {sorted(ours)}"
        for key in real:
            assert_same_value(real[key], ours[key], f"{path}[{key!r}]")
    elif isinstance(real, list):
        assert type(ours) is list, f"{path}: the SDK delivers a list, we {type(ours).__name__}"
        assert len(real) == len(ours), f"{path}: lengths differ"
        for i, (a, b) in enumerate(zip(real, ours, strict=True)):
            assert_same_value(a, b, f"{path}[{i}]")
    elif isinstance(real, sdk_model.JsFunction):
        assert callable(ours), f"{path}: a function arrives as a callable stub"
    elif isinstance(real, Exception):
        assert type(ours) is Exception, f"{path}: the SDK delivers an Exception, we {type(ours).__name__}"
        assert str(ours) == str(real), f"{path}: exception text {str(ours)!r} != the SDK's {str(real)!r}"
    else:
        assert type(ours) is not Exception, f"{path}: we deliver an Exception, the SDK {real!r}"
        assert ours == real, f"{path}: {ours!r} != the SDK's {real!r}"
        if isinstance(real, datetime.datetime):
            assert isinstance(ours, datetime.datetime), path
            assert ours.tzinfo == real.tzinfo, path


@pytest.mark.parametrize("copy_name", sorted(COPIES))
@pytest.mark.parametrize("name", list(CORPUS))
def test_imitation_decides_like_the_sdk(
    real: ModuleType, make: Callable[[str], Any], name: str, copy_name: str
) -> None:
    expected = real_outcome(real, make(name))
    got = our_outcome(COPIES[copy_name], make(name))
    match expected:
        case Refused(message):
            assert isinstance(got, Refused), f"the SDK refuses {name} ({message!r}); we deliver it"
            assert got.message.endswith(message), f"our error {got.message!r} does not end with {message!r}"
        case Unserialisable(reason):
            assert isinstance(got, Refused), f"workerd refuses {name} ({reason}); we deliver it"
        case Received(value):
            assert isinstance(got, Received), f"the SDK delivers {name}; we refuse it: {got}"
            assert_same_value(value, got.value)


def test_the_corpus_covers_every_outcome(real: ModuleType, make: Callable[[str], Any]) -> None:
    """The model is not vacuous: the corpus has values the SDK refuses, workerd refuses and both deliver."""
    kinds = {type(real_outcome(real, make(name))).__name__ for name in CORPUS}
    assert kinds == {"Refused", "Unserialisable", "Received"}


def test_received_values_are_shaped_like_the_sdks(real: ModuleType) -> None:
    """A received JS value, once converted (``from_js``, our ``to_py`` step): dicts at any depth become
    ``JsDict``, as the SDK's ``_replace_jsnull_with_none`` makes them."""
    value = {"a": [{"b": None}, 1], "c": {"d": {"e": []}}}
    expected = real._replace_jsnull_with_none(value)
    assert_same_value(expected, from_js(value))


def test_python_from_rpc_leaves_a_python_value_unchanged_like_the_sdks(real: ModuleType) -> None:
    """The SDK's ``python_from_rpc`` converts only JS values (those with a ``constructor``): a Python dict
    given to it comes back as the same object, and so it does from ours (ADR-0042)."""
    value = {"a": [{"b": None}, 1]}
    assert real.python_from_rpc(value) is value
    assert python_from_rpc(value) is value


JSDICT_OPERATIONS: dict[str, Callable[[Any], Any]] = {
    "read a key as an attribute": lambda d: d.present,
    "read a missing attribute": lambda d: d.missing,
    "a dict method wins over a key": lambda d: callable(d.items),
    "set an attribute": lambda d: (setattr(d, "added", 2), dict(d))[1],
    "delete an attribute": lambda d: (delattr(d, "present"), dict(d))[1],
    "attribute writes stay out of __dict__": lambda d: (setattr(d, "z", 1), vars(d))[1],
}


def _outcome_of(operation: Callable[[Any], Any], cls: type) -> tuple[str, Any]:
    target = cls({"present": 1, "items": "shadowed"})
    try:
        return ("returns", operation(target))
    except AttributeError:
        return ("AttributeError", dict(target))


@pytest.mark.parametrize("operation", list(JSDICT_OPERATIONS))
def test_jsdict_behaves_like_the_sdks(real: ModuleType, operation: str) -> None:
    assert _outcome_of(JSDICT_OPERATIONS[operation], JsDict) == _outcome_of(
        JSDICT_OPERATIONS[operation], real.JsDict
    )
