"""The root of every error Tsumugi raises, and the one base for "this field breaks this rule" (ADR-0141).

Every layer (core, client, performer, scheduler, the REST mapping) raises subclasses of `TsumugiError`, so
``except TsumugiError`` catches all of Tsumugi and nothing else. A bad value anywhere is an `InvalidFieldError`:
`field` is the field as the caller sent it (a path such as ``items[2].timeout_ms`` or
``bindings.MAIL.policy.rate.tokens``) and `rule` what its value must satisfy, so a caller can show or map
both without parsing the message. Errors that replace a built-in one keep it as a second base
(`InvalidFieldError` is a `ValueError`), so existing ``except ValueError`` code keeps working.
"""

from __future__ import annotations

__all__ = ["InvalidFieldError", "InvalidTypeError", "NotConfiguredError", "TsumugiError"]


class TsumugiError(Exception):
    """The root of every error Tsumugi raises."""


class InvalidFieldError(TsumugiError, ValueError):
    """A field breaks a rule; the message is ``<field> <rule>`` unless the class words it otherwise.

    Attributes:
        field: The field as the caller sent it: its name, or a path (``items[2].timeout_ms``).
        rule: What the value must satisfy, e.g. ``must be at least 1, got 0``.

    Example:
        >>> str(InvalidFieldError("max_attempts", "must be at least 1, got 0"))
        'max_attempts must be at least 1, got 0'
    """

    def __init__(self, field: str, rule: str, *, message: str | None = None) -> None:
        super().__init__(f"{field} {rule}" if message is None else message)
        self.field = field
        self.rule = rule

    def __reduce__(self) -> tuple[object, ...]:
        # Pickle and copy rebuild the error from its fields, not from the message alone.
        return (_rebuild, (type(self), self.field, self.rule, str(self)), self.__dict__)


def _rebuild(cls: type[InvalidFieldError], field: str, rule: str, message: str) -> InvalidFieldError:
    error = InvalidFieldError.__new__(cls)
    InvalidFieldError.__init__(error, field, rule, message=message)
    return error


class InvalidTypeError(InvalidFieldError, TypeError):
    """A field holds the wrong kind of value; also a `TypeError`, as the built-in check it replaces."""


class NotConfiguredError(TsumugiError, RuntimeError):
    """What a call needs is not installed, bound or defined here (httpx, the ``RUN`` binding, a function)."""
