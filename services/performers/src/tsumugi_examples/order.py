"""``Order``: a job of durable steps (ADR-0144 to ADR-0147) that charges, waits for its shipment, sleeps, mails.

1. ``charge`` is a step: it runs once per order, whatever retries follow (its result is kept in the job's
   shard; a real payment API would also get ``ctx.idempotency_key``).
2. It waits for the event ``shipped`` with the order id as its key (``POST /api/events``, a client's
   ``send_event``) for up to ``ship_within_s``; the job holds no invocation meanwhile. No shipment in time:
   the ``refund`` step runs once and the order ends refunded.
3. It sleeps ``follow_up_after_s`` (SLEEPING, no invocation held, no attempt used).
4. ``email`` is a step that posts the follow-up mail to the mail API (``MAIL_API_URL``), once.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import msgspec

from tsumugi_examples.send_mail import Post, platform_post
from tsumugi_performer import EventTimeoutError, JobContext, Performer

__all__ = ["Charge", "Order", "OrderPayload"]


class OrderPayload(msgspec.Struct, frozen=True, kw_only=True):
    """``{"order_id", "amount", "email"}``; the waits are in seconds."""

    order_id: str
    amount: int
    email: str
    ship_within_s: int = 7 * 86_400
    follow_up_after_s: int = 60


class Charge(msgspec.Struct, frozen=True, kw_only=True):
    """What the payment step answered."""

    charge_id: str
    amount: int


class Order(Performer[OrderPayload, dict[str, Any]]):
    """One order from charge to follow-up mail."""

    def __init__(self, api_url: str, post: Post | None = None) -> None:
        """Mail through ``api_url`` (through ``post`` when given, else the platform's fetch)."""
        self.api_url = api_url
        self._post: Post = post or platform_post

    @classmethod
    def from_env(cls, env: Any) -> Order:
        """Build from the Worker's vars (``MAIL_API_URL``)."""
        return cls(str(env.MAIL_API_URL))

    async def perform(self, payload: OrderPayload, ctx: JobContext) -> dict[str, Any]:
        """Charge, wait for the shipment, sleep, mail; each step once per order."""
        charge = await ctx.step("charge", _charge, payload.order_id, payload.amount)
        try:
            shipment = await ctx.wait_for_event(
                "shipped", key=payload.order_id, timeout=timedelta(seconds=payload.ship_within_s)
            )
        except EventTimeoutError:
            await ctx.step("refund", _refund, charge)
            return {"order_id": payload.order_id, "status": "refunded", "charge_id": charge.charge_id}
        await ctx.sleep(timedelta(seconds=payload.follow_up_after_s))
        mail = {
            "to": payload.email,
            "subject": f"Your order {payload.order_id} is on its way",
            "body": f"Tracking: {shipment}",
        }
        status = await ctx.step("email", self._mail, mail, f"{ctx.idempotency_key}:email")
        return {
            "order_id": payload.order_id,
            "status": "shipped",
            "charge_id": charge.charge_id,
            "shipment": shipment,
            "mail_status": status,
        }

    async def _mail(self, mail: dict[str, str], idempotency_key: str) -> int:
        headers = {"content-type": "application/json", "idempotency-key": idempotency_key}
        answer = await self._post(self.api_url, json.dumps(mail), headers)
        if answer.status >= 400:
            raise RuntimeError(f"mail API failed: {answer.status}")
        return answer.status


async def _charge(order_id: str, amount: int) -> Charge:
    # A stand-in for a payment API call; its result is what every later attempt reads back.
    return Charge(charge_id=f"ch_{order_id}", amount=amount)


async def _refund(charge: Charge) -> dict[str, Any]:
    return {"refunded": charge.charge_id, "amount": charge.amount}
