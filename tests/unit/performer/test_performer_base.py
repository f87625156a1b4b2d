"""Performer[P, R]: the payload type is found from the generic base and payloads decode into it."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar

import msgspec
import pytest

from tsumugi_performer import InvalidPayloadError, JobContext, NonRetryableError, Performer, payload_type_of

T = TypeVar("T")


class Mail(msgspec.Struct, frozen=True):
    to: str
    subject: str = ""


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


class SendMail(Performer[Mail, str]):
    async def perform(self, payload: Mail, ctx: JobContext) -> str:
        return payload.to


class Plot(Performer[Point, int]):
    async def perform(self, payload: Point, ctx: JobContext) -> int:
        return payload.x + payload.y


class Counts(Performer[dict[str, int], None]):
    async def perform(self, payload: dict[str, int], ctx: JobContext) -> None:
        return None


class Base(Performer[T, None], Generic[T]):
    async def perform(self, payload: T, ctx: JobContext) -> None:
        return None


class ViaBase(Base[Mail]):
    pass


class Swapped(Generic[T]):
    """A mixin whose own type variable must not be confused with the performer's."""


class MixedIn(Swapped[int], Base[Point]):
    pass


class Special(SendMail):
    """A plain subclass inherits its parent's payload type."""


class Open(Performer[Any, Any]):
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return payload


class Unparametrised(Performer):  # type: ignore[type-arg]
    async def perform(self, payload: Any, ctx: JobContext) -> Any:
        return payload


class TestPayloadType:
    @pytest.mark.parametrize(
        ("performer", "expected"),
        [
            (SendMail, Mail),
            (Plot, Point),
            (Counts, dict[str, int]),
            (ViaBase, Mail),
            (MixedIn, Point),
            (Special, Mail),
            (Open, Any),
            (Unparametrised, Any),
            (Base, Any),
        ],
    )
    def test_found_from_the_generic_base(
        self, performer: type[Performer[Any, Any]], expected: object
    ) -> None:
        assert payload_type_of(performer) == expected
        assert performer.payload_type() == expected


class TestDecodePayload:
    def test_struct_from_a_dict(self) -> None:
        assert SendMail.decode_payload({"to": "a@example.com"}) == Mail(to="a@example.com")

    def test_dataclass_from_a_dict(self) -> None:
        assert Plot.decode_payload({"x": 1, "y": 2}) == Point(x=1, y=2)

    def test_an_instance_of_the_type_passes_through(self) -> None:
        mail = Mail(to="x")
        assert SendMail.decode_payload(mail) is mail

    def test_through_an_intermediate_generic_class(self) -> None:
        assert ViaBase.decode_payload({"to": "b"}) == Mail(to="b")

    def test_open_payloads_are_left_alone(self) -> None:
        value = {"anything": [1, 2]}
        assert Open.decode_payload(value) is value

    def test_a_mismatch_names_the_field_and_the_rule(self) -> None:
        with pytest.raises(InvalidPayloadError) as caught:
            SendMail.decode_payload({"to": 5})
        assert str(caught.value) == "invalid payload for SendMail: Expected `str`, got `int` - at `$.to`"
        assert caught.value.performer == "SendMail"
        assert caught.value.detail == "Expected `str`, got `int` - at `$.to`"

    def test_a_missing_field_is_reported(self) -> None:
        with pytest.raises(InvalidPayloadError, match="missing required field `to`"):
            SendMail.decode_payload({})

    def test_payload_errors_are_not_retryable(self) -> None:
        with pytest.raises(NonRetryableError):
            Counts.decode_payload({"a": "b"})

    def test_from_json_text(self) -> None:
        assert SendMail.decode_payload_json(b'{"to":"c","subject":"hi"}') == Mail(to="c", subject="hi")
        assert Plot.decode_payload_json('{"x":3,"y":4}') == Point(x=3, y=4)

    def test_bad_json_text(self) -> None:
        with pytest.raises(InvalidPayloadError, match="invalid payload for SendMail: "):
            SendMail.decode_payload_json(b"{not json")
        with pytest.raises(InvalidPayloadError, match="Expected `int`"):
            Plot.decode_payload_json('{"x":"3","y":4}')


def test_perform_is_abstract() -> None:
    class Incomplete(Performer[int, int]):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()  # type: ignore[abstract]
