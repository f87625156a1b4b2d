"""What verifying a Cloudflare Access token costs in pure Python, next to a bearer-token check (ADR-0149).

Run: ``uv run python bench/access_verify.py [--quick]``.

Times, per call, the best of several blocks: the RSASSA-PKCS1-v1_5 SHA-256 check alone (one ``pow`` with
e = 65537 on a 2048-bit modulus, the encoding compared), a whole token (decode, signature, claims; keys
cached), and the bearer token's constant-time comparison. The budget: a verification stays well under Cloudflare's
10 ms of CPU per request on the free plan; CPython's figure is printed with the ratio to the bearer check, and a
Pyodide figure would be a small factor slower (WebAssembly), so the margin printed is what matters.

Prints the figures and one ``RESULT {json}`` line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable

from tsumugi_dev.access_standin import AccessStandIn, generate_rsa_key
from tsumugi_scheduler.access import RsaPublicKey, parse_token, verify_pkcs1_sha256
from tsumugi_scheduler.api.auth import same_secret
from tsumugi_scheduler.sign_in import cloudflare_access

BLOCK = 200
BUDGET_US = 10_000.0
"""Cloudflare's free-plan CPU time per request, in µs."""


def best_us(fn: Callable[[], object], blocks: int) -> float:
    best = float("inf")
    for _ in range(blocks):
        start = time.perf_counter()
        for _ in range(BLOCK):
            fn()
        best = min(best, (time.perf_counter() - start) / BLOCK * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    blocks = 3 if parser.parse_args().quick else 15
    key = generate_rsa_key(kid="bench")
    stand_in = AccessStandIn(team="bench", aud="aud", key=key)
    now_s = int(time.time())
    token = stand_in.token_for("ada@example.com", now_s=now_s)
    parsed = parse_token(token)
    public = RsaPublicKey(n=key.n, e=key.e)

    async def certs(url: str) -> tuple[int, str]:
        return 200, stand_in.jwks()

    scheme = cloudflare_access("bench", "aud", fetch=certs)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(scheme.verify(token, None, now_ms=now_s * 1000))  # the keys, fetched once

    def whole() -> None:
        loop.run_until_complete(scheme.verify(token, None, now_ms=now_s * 1000))

    def signature() -> None:
        assert verify_pkcs1_sha256(
            n=public.n, e=public.e, message=parsed.signing_input, signature=parsed.signature
        )

    figures = {
        "rs256_signature_us": best_us(signature, blocks),
        "access_token_us": best_us(whole, blocks),
        "bearer_compare_us": best_us(lambda: same_secret("a" * 40, "a" * 40), blocks),
    }
    loop.close()
    figures["token_to_bearer_ratio"] = figures["access_token_us"] / figures["bearer_compare_us"]
    figures["budget_fraction"] = figures["access_token_us"] / BUDGET_US
    for name, value in figures.items():
        print(f"{name:>24}: {value:,.3f}")
    print(f"one Access verification uses {figures['budget_fraction']:.1%} of the 10 ms CPU budget (CPython)")
    print("RESULT " + json.dumps({k: round(v, 4) for k, v in figures.items()}))


if __name__ == "__main__":
    main()
