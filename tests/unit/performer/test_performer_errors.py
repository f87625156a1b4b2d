"""Retry control from the performer: NonRetryableError and RetryAfterError.

Source: docs/reference/additions.md A8.
"""

from __future__ import annotations

from typing import Any

import pytest

from tsumugi_performer import InvalidPayloadError, NonRetryableError, RetryAfterError


def test_non_retryable_error_carries_its_message() -> None:
    error = NonRetryableError("mailbox does not exist")
    assert str(error) == "mailbox does not exist"
    assert isinstance(error, Exception)


def test_invalid_payload_is_non_retryable() -> None:
    assert issubclass(InvalidPayloadError, NonRetryableError)


class TestRetryAfter:
    def test_delay_counts_from_the_end_of_the_attempt(self) -> None:
        error = RetryAfterError("rate limited", delay_ms=30_000)
        assert error.delay_ms == 30_000
        assert error.at is None
        assert error.retry_at(1_000) == 31_000
        assert str(error) == "rate limited"

    def test_an_instant_is_used_as_is(self) -> None:
        error = RetryAfterError(at=90_000)
        assert error.retry_at(1_000) == 90_000
        assert str(error) == "retry later"

    def test_zero_delay_is_allowed(self) -> None:
        assert RetryAfterError(delay_ms=0).retry_at(5) == 5

    @pytest.mark.parametrize(
        "kwargs",
        [{}, {"delay_ms": 1, "at": 2}],
    )
    def test_exactly_one_of_delay_and_at(self, kwargs: dict[str, Any]) -> None:
        with pytest.raises(ValueError, match="RetryAfterError needs exactly one of delay_ms and at"):
            RetryAfterError(**kwargs)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"delay_ms": -1}, "delay_ms must be a non-negative integer"),
            ({"delay_ms": 1.5}, "delay_ms must be a non-negative integer"),
            ({"at": True}, "at must be a non-negative integer"),
            ({"at": -10}, "at must be a non-negative integer"),
        ],
    )
    def test_values_are_validated(self, kwargs: dict[str, Any], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            RetryAfterError(**kwargs)


class TestFromRetryAfterHeader:
    def test_delay_seconds(self) -> None:
        error = RetryAfterError.from_retry_after(" 120 ", "429 from upstream")
        assert error.delay_ms == 120_000
        assert str(error) == "429 from upstream"

    def test_http_date(self) -> None:
        error = RetryAfterError.from_retry_after("Wed, 21 Oct 2015 07:28:00 GMT")
        assert error.at == 1_445_412_480_000
        assert error.delay_ms is None

    def test_http_date_with_an_offset(self) -> None:
        assert RetryAfterError.from_retry_after("Wed, 21 Oct 2015 09:28:00 +0200").at == 1_445_412_480_000

    def test_dates_before_the_epoch_clamp_to_zero(self) -> None:
        assert RetryAfterError.from_retry_after("Wed, 31 Dec 1969 23:00:00 GMT").at == 0

    @pytest.mark.parametrize("header", ["", "soon", "-5", "1.5", "Wed, 99 Foo 2015"])
    def test_rejects_other_values(self, header: str) -> None:
        with pytest.raises(ValueError, match="Retry-After must be delay seconds or an HTTP date"):
            RetryAfterError.from_retry_after(header)
