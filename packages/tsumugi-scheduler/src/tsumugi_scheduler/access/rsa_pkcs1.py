"""RSASSA-PKCS1-v1_5 signature verification with SHA-256 (RFC 8017 §8.2.2), in pure Python (ADR-0149).

Access signs its JWTs with RS256, which is this scheme. Verification needs only the public key: ``s ** e mod n``
(Python's three-argument ``pow``), then a byte-for-byte comparison of the result with the one encoding the
message may have, ``00 01 FF..FF 00 || DigestInfo(SHA-256) || H(m)`` (EMSA-PKCS1-v1_5, RFC 8017 section 9.2). Comparing the
whole encoded block, never parsing it, leaves no room for the parsing flaws (garbage after the digest, short
padding, ASN.1 leniency) that forged signatures against lax verifiers; the comparison is constant-time.

Example:
    >>> verify_pkcs1_sha256(n=3233, e=17, message=b"x", signature=b"\\x00\\x01")
    False
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

from tsumugi_core.exceptions import InvalidFieldError

__all__ = ["MIN_MODULUS_BITS", "SHA256_DIGEST_INFO", "emsa_pkcs1_sha256", "verify_pkcs1_sha256"]

SHA256_DIGEST_INFO: Final = bytes.fromhex("3031300d060960864801650304020105000420")
"""The DER prefix of DigestInfo for SHA-256 (RFC 8017 §9.2, note 1)."""
MIN_MODULUS_BITS: Final = 2048
"""Keys shorter than this are refused (Access's keys are 2048-bit; NIST SP 800-131A disallows less)."""


def emsa_pkcs1_sha256(message: bytes, length: int) -> bytes:
    """The ``length``-byte EMSA-PKCS1-v1_5 encoding of ``message`` with SHA-256.

    Raises:
        ValueError: ``length`` leaves fewer than 8 bytes of padding (RFC 8017 §9.2 step 3).
    """
    t = SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
    padding = length - len(t) - 3
    if padding < 8:
        raise InvalidFieldError(
            "key", "is too short for a SHA-256 signature (intended encoded message length too short)"
        )
    return b"\x00\x01" + b"\xff" * padding + b"\x00" + t


def verify_pkcs1_sha256(*, n: int, e: int, message: bytes, signature: bytes) -> bool:
    """True when ``signature`` is a valid RS256 signature of ``message`` under the public key ``(n, e)``.

    Every check of RFC 8017 §8.2.2 is made: the signature is exactly ``k`` bytes (the modulus' length) and,
    as an integer, below ``n``; the key is at least `MIN_MODULUS_BITS` with an odd exponent above 1. Any
    failure is False, never an exception.
    """
    if n.bit_length() < MIN_MODULUS_BITS or e < 3 or e % 2 == 0 or e >= n:
        return False
    k = (n.bit_length() + 7) // 8
    if len(signature) != k:
        return False
    s = int.from_bytes(signature, "big")
    if s >= n:
        return False
    m = pow(s, e, n)
    encoded = m.to_bytes(k, "big")
    expected = emsa_pkcs1_sha256(message, k)
    return hmac.compare_digest(encoded, expected)
