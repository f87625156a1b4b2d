"""What ``enqueue`` is aimed at: a binding name, a performer class, or a `PerformerRef` (ADR-0062).

The payload of a typed target is checked by pyright against the performer's declared payload type, and the
job handle carries its result type, without the producer importing the performer's Worker at run time:

- a performer class (``client.enqueue(Hello, ...)``) when it can be imported (same project, tests): the
  binding is the class name and the result type is read from its ``Performer[P, R]`` base;
- `performer_ref` (``HELLO = performer_ref("Hello", lambda: Hello)``) when the class may only be imported
  under ``TYPE_CHECKING``: the lambda is never called, it only lets pyright see the class; a result that is
  not plain JSON (a Struct, a dataclass) names its run-time type with ``.returning(Greeting)``;
- a plain string (``client.enqueue("Hello", {...})``): untyped, as before.

The client never imports tsumugi_performer (client and performer are independent): `Performs` is the
structural shape of any performer, ``async def perform(self, payload: P, ctx) -> R``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, cast, get_args, get_origin

import msgspec

from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError, validate_binding_name
from tsumugi_core.options import EnqueueValidationError

__all__ = ["P", "PerformerRef", "Performs", "R", "Target", "performer_ref", "resolve_target"]

P = TypeVar("P")
"""A performer's payload type."""
R = TypeVar("R")
"""A performer's result type."""
_P_contra = TypeVar("_P_contra", contravariant=True)
_R_co = TypeVar("_R_co", covariant=True)


class Performs(Protocol[_P_contra, _R_co]):
    """Any performer: a class whose instances have ``async perform(payload, ctx)``."""

    async def perform(self, payload: _P_contra, ctx: Any, /) -> _R_co:
        """Run one attempt."""
        ...


class PerformerRef(msgspec.Struct, Generic[P, R], frozen=True):
    """A typed handle on a binding: its name at run time, its payload and result types for pyright.

    Attributes:
        binding: The binding name (the performer's exported class name).
        result_type: The type results are decoded into (msgspec); None keeps the decoded JSON as it is, which
            is right for ``str``, ``int``, ``list`` and ``dict`` results.

    Example:
        >>> HELLO: PerformerRef[dict[str, str], str] = PerformerRef("Hello")
        >>> HELLO.binding
        'Hello'
    """

    binding: str
    result_type: Any = None

    def returning(self, result_type: type[R]) -> PerformerRef[P, R]:
        """This reference, decoding results into ``result_type`` (pyright checks it is the performer's ``R``).

        Example:
            >>> PerformerRef("Count").returning(int).result_type
            <class 'int'>
        """
        return PerformerRef(self.binding, result_type)


def performer_ref(binding: str, performer: Callable[[], type[Performs[P, R]]]) -> PerformerRef[P, R]:
    """A `PerformerRef` typed from a performer class that is only imported for type checking.

    ``performer`` is a lambda returning the class; it is never called, so the class (and its Worker module)
    need not be importable at run time. Results decode as plain JSON unless `PerformerRef.returning` names
    their type.

    Example:
        >>> from typing import TYPE_CHECKING
        >>> if TYPE_CHECKING:
        ...     from hello_worker import Hello
        >>> HELLO = performer_ref("Hello", lambda: Hello)
        >>> HELLO.binding
        'Hello'

    Raises:
        InvalidFieldError: ``binding`` is not a binding name (a ValueError).
    """
    try:
        validate_binding_name(binding)
    except InvalidJobIdError as exc:
        raise InvalidFieldError("binding", str(exc), message=str(exc)) from None
    return PerformerRef(binding)


Target = str | PerformerRef[Any, Any] | type[Performs[Any, Any]]
"""What ``enqueue`` accepts as its first argument."""


def _substituted(arg: Any, bindings: dict[Any, Any]) -> Any:
    if isinstance(arg, TypeVar):
        return bindings.get(arg, arg)
    parameters: tuple[Any, ...] = getattr(arg, "__parameters__", ())
    if parameters and bindings:
        return arg[tuple(bindings.get(p, p) for p in parameters)]
    return arg


def _declared_result(klass: type, bindings: dict[Any, Any]) -> Any:
    """The ``R`` of the ``Performer[P, R]`` base of ``klass``, with type variables of generic bases bound."""
    bases: tuple[Any, ...] = klass.__dict__.get("__orig_bases__", klass.__bases__)
    for base in bases:
        origin: Any = get_origin(base) or base
        args = tuple(_substituted(arg, bindings) for arg in get_args(base))
        if getattr(origin, "__name__", None) == "Performer" and len(args) == 2:
            return args[1]
        if isinstance(origin, type) and origin is not object:
            parameters: tuple[Any, ...] = getattr(origin, "__parameters__", ())
            found = _declared_result(origin, dict(zip(parameters, args, strict=False)))
            if found is not None:
                return found
    return None


def _result_type_of(performer: type) -> Any:
    # None (plain JSON) when no Performer base is found or R is left open (still holds a type variable).
    found = _declared_result(performer, {})
    if isinstance(found, TypeVar) or getattr(found, "__parameters__", ()):
        return None
    return found


def resolve_target(target: object) -> tuple[str, Any]:
    """The binding name and result type (None: plain JSON) of an enqueue target.

    Raises:
        EnqueueValidationError: ``target`` is none of a string, a `PerformerRef` or a class (field ``binding``).
    """
    if isinstance(target, str):
        return target, None
    if isinstance(target, PerformerRef):
        ref = cast("PerformerRef[Any, Any]", target)
        return ref.binding, ref.result_type
    if isinstance(target, type):
        return target.__name__, _result_type_of(target)
    raise EnqueueValidationError(
        "binding", f"must be a binding name, a performer class or a PerformerRef, got {type(target).__name__}"
    )
