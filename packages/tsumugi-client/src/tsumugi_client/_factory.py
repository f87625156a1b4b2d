"""`create_client`: pick the transport and check the configuration once, at creation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tsumugi_client._client import WorkerClient
from tsumugi_client._httpx import load_httpx
from tsumugi_client._routing import BindingConfig, normalize_bindings
from tsumugi_client._rpc_transport import ServiceBindingTransport
from tsumugi_client._transport import Transport
from tsumugi_core.enqueue_defaults import OnEnqueue
from tsumugi_core.exceptions import InvalidFieldError, NotConfiguredError
from tsumugi_core.ids import InvalidJobIdError, validate_binding_name

if TYPE_CHECKING:
    import httpx

__all__ = ["create_client"]


def _http_transport(base_url: object, token: str | None, http_client: httpx.AsyncClient | None) -> Transport:
    httpx = load_httpx()  # only for HTTP: inside a Worker the client goes through the Service Binding
    try:
        from tsumugi_client._http_transport import HttpTransport
    except ImportError as error:  # needs httpx: a Worker's upload has none (ADR-0107)
        raise NotConfiguredError("the HTTP transport needs httpx, which this environment lacks") from error

    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise InvalidFieldError("base_url", f"must be an absolute http:// or https:// URL, got {base_url!r}")
    if token is not None and (not isinstance(token, str) or not token.strip()):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidFieldError(
            "token", "must be a non-empty string (or None when the scheduler needs no token)"
        )
    if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
        raise InvalidFieldError(
            "http_client", f"must be an httpx.AsyncClient, got {type(http_client).__name__}"
        )
    return HttpTransport(base_url, token, http_client)


def create_client(
    *,
    on_enqueue: OnEnqueue | None = None,
    bindings: Mapping[str, BindingConfig] | None = None,
    base_url: str | None = None,
    token: str | None = None,
    http_client: httpx.AsyncClient | None = None,
    service: str = "TSUMUGI",
) -> WorkerClient:
    """Make a client; Service Binding RPC when ``base_url`` is None, HTTP to the REST API otherwise.

    Args:
        on_enqueue: Called with every item; returns defaults for options the caller left out (A1).
        bindings: ``{binding: {"shards": N}}``, the same shard counts the scheduler has; a binding left out is
            routed by the scheduler.
        base_url: The scheduler Worker's origin, e.g. ``https://tsumugi.example.workers.dev``; selects HTTP.
        token: The bearer token of the REST API (HTTP only).
        http_client: An ``httpx.AsyncClient`` to reuse (HTTP only; the caller closes it). Without one the
            client makes its own; close it with ``aclose()`` or ``async with``.
        service: The env name of the Service Binding to the scheduler (RPC only).

    Example:
        >>> client = create_client(bindings={"MAIL": {"shards": 4}})
        >>> create_client(bindings={"MAIL": {"shards": 0}})
        Traceback (most recent call last):
        ...
        tsumugi_core.exceptions.InvalidFieldError: bindings['MAIL'].shards must be an integer of at least 1, got 0

    Raises:
        ValueError: a setting breaks its rule; the message names it.
    """
    if on_enqueue is not None and not callable(on_enqueue):
        raise InvalidFieldError("on_enqueue", f"must be callable, got {type(on_enqueue).__name__}")
    shard_counts = normalize_bindings(bindings)
    transport: Transport
    if base_url is None:
        if token is not None or http_client is not None:
            raise InvalidFieldError(
                "base_url",
                "is required with token or http_client",
                message="token and http_client apply to HTTP only: give base_url too",
            )
        try:
            validate_binding_name(service)
        except InvalidJobIdError:
            raise InvalidFieldError(
                "service", f"must be an env binding name (an identifier), got {service!r}"
            ) from None
        transport = ServiceBindingTransport(service)
    else:
        transport = _http_transport(base_url, token, http_client)
    return WorkerClient(transport=transport, shard_counts=shard_counts, on_enqueue=on_enqueue)
