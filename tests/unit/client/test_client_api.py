"""The public surface of tsumugi_client: explicit sorted __all__, option names in step with the core."""

from __future__ import annotations

import inspect

import pytest

import tsumugi_client
from tsumugi_client import AsyncTsumugiClient, EnqueueItemDict, EnqueueKwargs, TsumugiClient, WorkerClient
from tsumugi_client._errors import validation_error_from_text
from tsumugi_core.options import EnqueueOptions


def test_all_is_sorted_and_names_exactly_the_public_attributes() -> None:
    names = tsumugi_client.__all__
    assert names == sorted(names, key=lambda name: (not name.isupper(), name))
    public = {name for name in vars(tsumugi_client) if not name.startswith("_")}
    assert set(names) == public


def test_enqueue_kwargs_has_exactly_the_core_option_names() -> None:
    assert set(EnqueueKwargs.__annotations__) == set(EnqueueOptions.__struct_fields__)
    assert set(EnqueueItemDict.__required_keys__) == {"binding", "payload"}


@pytest.mark.parametrize("client_class", [TsumugiClient, AsyncTsumugiClient])
def test_enqueue_takes_target_and_payload_positionally_and_options_by_keyword_only(
    client_class: type,
) -> None:
    parameters = inspect.signature(client_class.enqueue).parameters
    kinds = [p.kind for p in parameters.values()]
    assert kinds == [inspect.Parameter.POSITIONAL_ONLY] * 3 + [inspect.Parameter.VAR_KEYWORD]


def test_the_worker_client_takes_env_then_anything_else_by_position_or_keyword() -> None:
    parameters = inspect.signature(WorkerClient.enqueue).parameters
    assert list(parameters) == ["self", "env", "args", "options"]


class TestValidationErrorFromText:
    def test_plain_text_is_not_a_validation_error(self) -> None:
        assert validation_error_from_text("RuntimeError: boom") is None

    def test_the_last_matching_line_wins(self) -> None:
        text = (
            "Traceback:\n  raise EnqueueValidationError: inner field rule\n"
            "tsumugi_core.options.EnqueueValidationError: items[4].backoff.delay_ms must not be negative\r\n"
        )
        error = validation_error_from_text(text)
        assert error is not None
        assert (error.field, error.rule) == ("items[4].backoff.delay_ms", "must not be negative")
