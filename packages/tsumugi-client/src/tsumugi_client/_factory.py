"""`create_client`: the Worker client, its configuration checked once, at creation."""

from __future__ import annotations

from collections.abc import Mapping

from tsumugi_client._client import WorkerClient
from tsumugi_client._routing import BindingConfig, normalize_bindings
from tsumugi_client._rpc_transport import ServiceBindingTransport
from tsumugi_core.enqueue_defaults import OnEnqueue
from tsumugi_core.exceptions import InvalidFieldError
from tsumugi_core.ids import InvalidJobIdError, validate_binding_name

__all__ = ["create_client"]


def create_client(
    *,
    on_enqueue: OnEnqueue | None = None,
    bindings: Mapping[str, BindingConfig] | None = None,
    service: str = "TSUMUGI",
) -> WorkerClient:
    """Make the Worker client: Service Binding RPC to the scheduler through ``env.<service>``.

    Outside a Worker use `TsumugiClient` / `AsyncTsumugiClient` (HTTP): the same methods without ``env``
    (ADR-0162).

    Args:
        on_enqueue: Called with every item; returns defaults for options the caller left out (A1).
        bindings: ``{binding: {"shards": N}}``, the same shard counts the scheduler has; a binding left out is
            routed by the scheduler.
        service: The env name of the Service Binding to the scheduler.

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
    try:
        validate_binding_name(service)
    except InvalidJobIdError:
        raise InvalidFieldError(
            "service", f"must be an env binding name (an identifier), got {service!r}"
        ) from None
    return WorkerClient(
        transport=ServiceBindingTransport(service), shard_counts=shard_counts, on_enqueue=on_enqueue
    )
