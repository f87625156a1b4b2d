"""The Service Binding transport: RPC calls on ``env.<service>`` (the scheduler's entrypoint).

Arguments are plain values (the client builds them by a JSON round trip), answers come back as dicts
(``JsDict`` on Cloudflare) and lists. Refusals are returned values; validation failures arrive as exceptions
whose text carries ``EnqueueValidationError: <field> <rule>`` (docs/design/scheduler-rpc.md §2.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import msgspec

from tsumugi_client._errors import TsumugiClientError, refusal_error, validation_error_from_text
from tsumugi_client._views import CancelResult, JobDetail, decode_job_detail
from tsumugi_core.remote_calls import is_missing_method

__all__ = ["ServiceBindingTransport"]


_ENCODE = msgspec.json.Encoder().encode


class _MissingMethodError(TsumugiClientError):
    """The scheduler has no such RPC method (an older deployment); never leaves this module."""

    def __init__(self, method: str) -> None:
        super().__init__(None, f"the scheduler has no RPC method {method}")


class ServiceBindingTransport:
    """Calls the scheduler's RPC methods through the Service Binding named ``service`` in the Worker's env."""

    def __init__(self, service: str) -> None:
        """Use the binding ``env.<service>`` at each call."""
        self._service = service
        self._json = True

    def stub(self, env: object) -> Any:
        """The binding ``env.<service>`` (``env`` may be a plain mapping).

        Raises:
            TsumugiClientError: ``env`` is None or has no such binding.
        """
        if env is None:
            raise TsumugiClientError(
                None,
                "env is None: the Service Binding transport needs the Worker's env "
                "(or create the client with base_url=... to use HTTP)",
            )
        stub: Any = getattr(env, self._service, None)
        if stub is None and isinstance(env, Mapping):
            stub = cast("Mapping[str, Any]", env).get(self._service)  # an env given as a plain mapping
        if stub is None:
            raise TsumugiClientError(
                None,
                f"env has no {self._service} binding: add a service binding to the scheduler Worker "
                "in the wrangler config, or create the client with base_url=... to use HTTP",
            )
        return stub

    async def _call(self, env: object, method: str, *args: Any, older: bool = False) -> Any:
        stub = self.stub(env)
        if older and getattr(stub, method, None) is None:
            raise _MissingMethodError(method)  # a plain Python stand-in without it (a JS stub has every name)
        try:
            answer: Any = await getattr(stub, method)(*args)
            return answer
        except Exception as exc:
            if older and is_missing_method(exc, method):
                raise _MissingMethodError(method) from exc
            # The type name is part of the text: a local exception's str() omits it, a remote one includes it.
            validation = validation_error_from_text(f"{type(exc).__name__}: {exc}")
            if validation is not None:
                raise validation from exc
            raise TsumugiClientError(
                None, f"scheduler RPC {method} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def enqueue_many(self, env: object, items: list[dict[str, Any]]) -> list[str]:
        """Call ``enqueue_json``, or ``enqueue_many`` on a scheduler predating it; one id per item.

        ``enqueue_json`` takes the items and answers the ids as JSON text: one value crosses each way (ADR-0166).
        """
        answer: Any = None
        if self._json:
            try:
                text = await self._call(env, "enqueue_json", _ENCODE(items).decode(), older=True)
                try:
                    answer = msgspec.json.decode(text) if isinstance(text, str) else text
                except msgspec.DecodeError as exc:
                    raise TsumugiClientError(
                        None, f"the scheduler answered enqueue_json with text that is not JSON: {exc}"
                    ) from None
            except _MissingMethodError:
                self._json = False  # this scheduler predates it: plain data from now on
        if not self._json:
            answer = await self._call(env, "enqueue_many", items)
        try:
            ids = msgspec.convert(answer, list[str])
        except msgspec.ValidationError as exc:
            raise TsumugiClientError(
                None, f"the scheduler answered enqueue_many with a malformed list: {exc}"
            ) from None
        if len(ids) != len(items):
            raise TsumugiClientError(
                None, f"the scheduler answered {len(ids)} ids for {len(items)} items in enqueue_many"
            )
        return ids

    async def get(self, env: object, job_id: str) -> JobDetail | None:
        """Call ``get(job_id)``; None means the scheduler does not know the job."""
        answer = await self._call(env, "get", job_id)
        return None if answer is None else decode_job_detail(answer)

    async def _mutate(self, env: object, method: str, job_id: str, *args: Any) -> Mapping[str, Any]:
        answer = await self._call(env, method, job_id, *args)
        if not isinstance(answer, Mapping) or not isinstance(answer.get("ok"), bool):  # pyright: ignore[reportUnknownMemberType]
            raise TsumugiClientError(
                None, f"the scheduler answered {method} with a malformed value: {answer!r}"
            )
        mapping: Mapping[str, Any] = answer  # pyright: ignore[reportUnknownVariableType]
        if not mapping["ok"]:
            raise refusal_error(job_id, mapping.get("reason"))
        return mapping

    async def cancel(self, env: object, job_id: str) -> CancelResult:
        """Call ``cancel(job_id)``."""
        answer = await self._mutate(env, "cancel", job_id)
        return CancelResult(requested=answer.get("requested") is True)

    async def retry(self, env: object, job_id: str) -> None:
        """Call ``retry(job_id)``."""
        await self._mutate(env, "retry", job_id)

    async def reschedule(self, env: object, job_id: str, body: dict[str, Any]) -> None:
        """Call ``reschedule(job_id, body)``."""
        await self._mutate(env, "reschedule", job_id, body)

    async def send_event(self, env: object, body: dict[str, Any]) -> object:
        """Call ``send_event(name, key, payload, id)`` (ADR-0146)."""
        return await self._call(env, "send_event", body["name"], body["key"], body["payload"], body.get("id"))

    async def aclose(self) -> None:
        """Nothing to release: the binding belongs to the Worker."""
