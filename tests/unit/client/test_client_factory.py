"""create_client: transport choice and configuration errors, checked once at creation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tsumugi_client import WorkerClient, create_client


def test_defaults_make_a_service_binding_client() -> None:
    assert isinstance(create_client(), WorkerClient)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"token": "t"}, "token and http_client apply to HTTP only: give base_url too"),
        ({"service": "not a name"}, "service must be an env binding name"),
        ({"base_url": "ftp://x"}, "base_url must be an absolute http:// or https:// URL, got 'ftp://x'"),
        ({"base_url": "tsumugi.example.com"}, "base_url must be an absolute"),
        ({"base_url": "https://x", "token": ""}, "token must be a non-empty string"),
        ({"base_url": "https://x", "token": "  "}, "token must be a non-empty string"),
        ({"base_url": "https://x", "http_client": object()}, "http_client must be an httpx.AsyncClient"),
        ({"on_enqueue": 3}, "on_enqueue must be callable"),
        (
            {"bindings": {"MAIL": {"shards": -1}}},
            r"bindings\['MAIL'\]\.shards must be an integer of at least 1",
        ),
    ],
)
def test_bad_settings_name_the_setting_and_the_rule(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_client(**kwargs)


async def test_http_client_without_base_url_is_refused() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(ValueError, match="give base_url too"):
            create_client(http_client=http)
