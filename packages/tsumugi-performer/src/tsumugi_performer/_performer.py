"""`Performer[P, R]`: the base class of job bodies, and decoding of payloads into the declared type."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar, cast, get_args, get_origin

import msgspec

from tsumugi_performer._context import JobContext
from tsumugi_performer._errors import InvalidPayloadError

__all__ = ["P", "Performer", "R", "payload_type_of", "result_type_of"]

P = TypeVar("P")
"""The payload type a performer declares."""
R = TypeVar("R")
"""The result type a performer returns."""


class Performer(ABC, Generic[P, R]):
    """A job body. Subclass it with the payload and result types and implement `perform`.

    The binding name is the name the class is exported under in the performer Worker. The payload arrives as
    JSON-shaped data and is converted into ``P`` with msgspec before `perform` is called, so ``P`` can be a
    msgspec Struct, a dataclass, a TypedDict or any type msgspec converts to.

    Example:
        >>> import msgspec
        >>> class Mail(msgspec.Struct):
        ...     to: str
        >>> class SendMail(Performer[Mail, str]):
        ...     async def perform(self, payload: Mail, ctx: JobContext) -> str:
        ...         return f"sent to {payload.to}"
        >>> SendMail.decode_payload({"to": "a@example.com"})
        Mail(to='a@example.com')
    """

    @abstractmethod
    async def perform(self, payload: P, ctx: JobContext) -> R:
        """Run one attempt of the job.

        Raise `NonRetryableError` to fail the job now, `RetryAfterError` to choose when the next attempt may
        start, anything else to retry with the binding's backoff. The return value is stored as the result.
        """

    @classmethod
    def payload_type(cls) -> Any:
        """The declared payload type ``P`` (``Any`` when the class leaves it open)."""
        return payload_type_of(cls)

    @classmethod
    def decode_payload(cls, value: object) -> P:
        """Convert JSON-shaped data (dicts, lists, strings, numbers) into the declared payload type.

        Raises:
            InvalidPayloadError: The data does not fit; the message names the field and the rule.
        """
        try:
            return cast(P, msgspec.convert(value, type=payload_type_of(cls)))
        except msgspec.ValidationError as error:
            raise InvalidPayloadError(cls.__name__, str(error)) from None

    @classmethod
    def decode_payload_json(cls, data: bytes | str) -> P:
        """Decode JSON text straight into the declared payload type.

        Raises:
            InvalidPayloadError: The text is not JSON or does not fit the type.
        """
        try:
            return cast(P, msgspec.json.decode(data, type=payload_type_of(cls)))
        except msgspec.DecodeError as error:
            raise InvalidPayloadError(cls.__name__, str(error)) from None


def _substitute(args: tuple[Any, ...], bindings: dict[Any, Any]) -> tuple[Any, ...]:
    return tuple(bindings.get(arg, arg) if isinstance(arg, TypeVar) else arg for arg in args)


def _find_payload_type(cls: type, bindings: dict[Any, Any], index: int = 0) -> Any | None:
    """Walk the generic bases of `cls` down to ``Performer[P, R]``, carrying type-variable bindings.

    Answers its ``index``-th argument (0: ``P``, 1: ``R``).
    """
    bases: tuple[Any, ...] = cls.__dict__.get("__orig_bases__", cls.__bases__)
    for base in bases:
        origin: Any = get_origin(base) or base
        if origin is Performer:
            args = _substitute(get_args(base), bindings)
            return args[index] if len(args) > index else Any
        if isinstance(origin, type) and issubclass(origin, Performer):
            generic_base = cast(type, origin)
            parameters: tuple[Any, ...] = getattr(generic_base, "__parameters__", ())
            args = _substitute(get_args(base), bindings)
            found = _find_payload_type(generic_base, dict(zip(parameters, args, strict=False)), index)
            if found is not None:
                return found
    return None


@functools.cache
def payload_type_of(performer: type[Performer[Any, Any]]) -> Any:
    """The payload type a performer class declares through its generic base, or ``Any`` when left open.

    Follows intermediate generic classes, e.g. ``class Base(Performer[T, None])`` then
    ``class Job(Base[Mail])`` declares ``Mail``.
    """
    found = _find_payload_type(performer, {})
    if found is None or isinstance(found, TypeVar):
        return Any
    return found


@functools.cache
def result_type_of(performer: type[Performer[Any, Any]]) -> Any:
    """The result type ``R`` a performer class declares through its generic base, or ``Any`` when left open."""
    found = _find_payload_type(performer, {}, 1)
    if found is None or isinstance(found, TypeVar):
        return Any
    return found
