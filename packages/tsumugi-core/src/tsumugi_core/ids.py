"""Identifiers: binding names, job ids, shard names and run ids.

The shapes and error messages are those of the original (docs/reference/original.md §1.2 and §2.14), so ids
made by either implementation address the same Durable Objects:

- binding name: ``^[A-Za-z_][A-Za-z0-9_]*$`` (also an env key, hence identifier-shaped);
- job id: ``<binding>#<shard>:<local_id>``, for example ``MAIL#0:abc``;
- shard (Durable Object) name: ``<binding>#<shard>``, for example ``MAIL#0``;
- run id: ``<flow>:<local_id>``;
- local id and flow name: ``^[A-Za-z0-9_-]+$``.

Examples:
    >>> format_job_id("MAIL", 0, "abc")
    'MAIL#0:abc'
    >>> parse_job_id("MAIL#3:abc")
    JobId(binding='MAIL', shard=3, local_id='abc')
    >>> shard_name_of("MAIL#3:abc")
    'MAIL#3'
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Final

import msgspec

from tsumugi_core.exceptions import InvalidFieldError, TsumugiError

__all__ = [
    "BINDING_NAME_RE",
    "FLOW_NAME_RE",
    "LOCAL_ID_ENTROPY_BYTES",
    "LOCAL_ID_LENGTH",
    "LOCAL_ID_RE",
    "InvalidJobIdError",
    "InvalidRunIdError",
    "JobId",
    "RunId",
    "format_job_id",
    "format_run_id",
    "is_valid_local_id",
    "new_local_id",
    "parse_job_id",
    "parse_run_id",
    "shard_name",
    "shard_name_of",
    "validate_binding_name",
    "validate_flow_name",
]

# Patterns are ASCII-only and used with fullmatch: Python's `\d` accepts any Unicode digit and `$` accepts a
# trailing newline, both of which the original's JavaScript patterns reject.
BINDING_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A binding name: an identifier (letters, digits, underscore; not starting with a digit)."""
LOCAL_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]+")
"""The local part of a job or run id."""
FLOW_NAME_RE: Final = re.compile(r"[A-Za-z0-9_-]+")
"""A flow name (the first part of a run id)."""
_SHARD_RE: Final = re.compile(r"[0-9]+")
_VALID_BINDINGS: set[str] = set()
"""Binding names already found valid (a deployment has a few; `_MAX_REMEMBERED_BINDINGS` at most)."""
_MAX_REMEMBERED_BINDINGS: Final = 1_024

LOCAL_ID_LENGTH: Final = 24
"""Length of generated local ids (the original's cuid2 length)."""
LOCAL_ID_ENTROPY_BYTES: Final = 24
"""Minimum number of random bytes `new_local_id` needs; 192 bits keep the base-36 digits unbiased."""

_LETTERS: Final = "abcdefghijklmnopqrstuvwxyz"
_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyz"
_PAIRS: Final = tuple(low + high for high in _ALPHABET for low in _ALPHABET)
"""Two base-36 digits, least significant first, for each number below 36**2 (`new_local_id` writes two a step)."""
_PAIR_BASE: Final = len(_ALPHABET) ** 2


class InvalidJobIdError(TsumugiError, ValueError):
    """A binding name, shard, local id or job id does not have the required shape."""


class InvalidRunIdError(TsumugiError, ValueError):
    """A flow name, local id or run id does not have the required shape."""


class JobId(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed job id ``<binding>#<shard>:<local_id>``.

    Attributes:
        binding: The performer binding name.
        shard: The shard index (non-negative).
        local_id: The id inside the shard.
    """

    binding: str
    shard: int
    local_id: str

    @property
    def shard_name(self) -> str:
        """The name of the Durable Object holding this job, e.g. ``MAIL#0``."""
        return shard_name(self.binding, self.shard)

    def __str__(self) -> str:
        return format_job_id(self.binding, self.shard, self.local_id)


class RunId(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed run id ``<flow>:<local_id>``.

    Attributes:
        flow: The flow name.
        local_id: The id of the run inside the flow.
    """

    flow: str
    local_id: str

    def __str__(self) -> str:
        return format_run_id(self.flow, self.local_id)


def _quote(value: str) -> str:
    # JSON quoting matches the original's JSON.stringify in messages and shows empty or odd values clearly.
    return json.dumps(value, ensure_ascii=False)


def validate_binding_name(binding: str) -> str:
    """Check a binding name and return it unchanged.

    Raises:
        InvalidJobIdError: The name does not match `BINDING_NAME_RE`.
    """
    if type(binding) is str and binding in _VALID_BINDINGS:  # a deployment has a few names, checked often
        return binding
    if not BINDING_NAME_RE.fullmatch(binding):
        raise InvalidJobIdError(
            f"invalid binding name: {_quote(binding)} (alphanumeric, must start with a letter or underscore)"
        )
    if type(binding) is str and len(_VALID_BINDINGS) < _MAX_REMEMBERED_BINDINGS:
        _VALID_BINDINGS.add(binding)
    return binding


def validate_flow_name(flow: str) -> str:
    """Check a flow name and return it unchanged.

    Raises:
        InvalidRunIdError: The name does not match `FLOW_NAME_RE`.
    """
    if not FLOW_NAME_RE.fullmatch(flow):
        raise InvalidRunIdError(
            f"invalid flow name: {_quote(flow)} (alphanumeric, hyphen and underscore only)"
        )
    return flow


def is_valid_local_id(local_id: str) -> bool:
    """Whether `local_id` may be the local part of a job or run id."""
    return LOCAL_ID_RE.fullmatch(local_id) is not None


def _local_id_message(local_id: str) -> str:
    return f"invalid localId: {_quote(local_id)} (alphanumeric, hyphen and underscore only)"


def _validate_shard(shard: int) -> int:
    # bool is an int subclass; True as a shard index is a caller bug, not shard 1.
    if isinstance(shard, bool) or not isinstance(shard, int) or shard < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidJobIdError(f"invalid shard: {shard!r} (non-negative integer)")
    return shard


def shard_name(binding: str, shard: int) -> str:
    """The Durable Object name of one shard of a binding.

    Example:
        >>> shard_name("MAIL", 0)
        'MAIL#0'

    Raises:
        InvalidJobIdError: The binding name or the shard index is invalid.
    """
    if type(binding) is str and type(shard) is int:
        return _shard_name_cached(binding, shard)
    return _shard_name(binding, shard)


@lru_cache(maxsize=1024)
def _shard_name_cached(binding: str, shard: int) -> str:
    return _shard_name(binding, shard)  # a deployment has a few shards, named on every job's way


def _shard_name(binding: str, shard: int) -> str:
    return f"{validate_binding_name(binding)}#{_validate_shard(shard)}"


def format_job_id(binding: str, shard: int, local_id: str) -> str:
    """Build a job id ``<binding>#<shard>:<local_id>``.

    Raises:
        InvalidJobIdError: Any part is invalid; the message names the part and its rule.
    """
    name = shard_name(binding, shard)
    if not is_valid_local_id(local_id):
        raise InvalidJobIdError(_local_id_message(local_id))
    job_id = f"{name}:{local_id}"
    _remember(job_id, JobId(binding=binding, shard=shard, local_id=local_id))  # its parse, known already
    return job_id


def parse_job_id(job_id: str) -> JobId:
    """Split a job id into binding, shard and local id.

    The binding ends at the first ``#``; the shard ends at the first ``:`` after it. Everything after that
    colon is the local id, so a second colon makes the local id invalid. A job's id is parsed several times
    on its way (producer checks, routing, the shard's own checks): a few thousand valid ids parsed or built
    by `format_job_id` lately are remembered (`JobId` is frozen, so sharing one is safe).

    Raises:
        InvalidJobIdError: The text is not a valid job id.
    """
    if type(job_id) is str:
        parsed = _PARSED.get(job_id)
        if parsed is None:
            parsed = _parse_job_id(job_id)
            _remember(job_id, parsed)
        return parsed
    return _parse_job_id(job_id)


_PARSED: dict[str, JobId] = {}
"""Job ids parsed or formatted lately, with their parts: at most `_MAX_PARSED`, all forgotten at once when full
(one call, safe beside another thread; a hot id is parsed again once)."""
_MAX_PARSED: Final = 4_096


def _remember(job_id: str, parsed: JobId) -> None:
    if len(_PARSED) >= _MAX_PARSED:
        _PARSED.clear()
    _PARSED[job_id] = parsed


def _parse_job_id(job_id: str) -> JobId:
    hash_at = job_id.find("#")
    if hash_at < 0:
        raise InvalidJobIdError(f'missing "#": {_quote(job_id)}')
    colon_at = job_id.find(":", hash_at + 1)
    if colon_at < 0:
        raise InvalidJobIdError(f'missing ":": {_quote(job_id)}')
    binding = validate_binding_name(job_id[:hash_at])
    shard_text = job_id[hash_at + 1 : colon_at]
    if not _SHARD_RE.fullmatch(shard_text):
        raise InvalidJobIdError(f"shard is not a number: {_quote(job_id)}")
    local_id = job_id[colon_at + 1 :]
    if not is_valid_local_id(local_id):
        raise InvalidJobIdError(_local_id_message(local_id))
    try:
        shard = int(shard_text)
    except ValueError:  # over CPython's 4,300 digits: no binding has such a shard
        raise InvalidJobIdError(f"shard is not a number of at most 4300 digits: {_quote(job_id)}") from None
    return JobId(binding=binding, shard=shard, local_id=local_id)


def shard_name_of(job_id: str) -> str:
    """The Durable Object name (``<binding>#<shard>``) that holds a job, in O(1).

    Raises:
        InvalidJobIdError: The text is not a valid job id.
    """
    return parse_job_id(job_id).shard_name


def format_run_id(flow: str, local_id: str) -> str:
    """Build a run id ``<flow>:<local_id>``.

    Raises:
        InvalidRunIdError: The flow name or the local id is invalid.
    """
    validate_flow_name(flow)
    if not is_valid_local_id(local_id):
        raise InvalidRunIdError(_local_id_message(local_id))
    return f"{flow}:{local_id}"


def parse_run_id(run_id: str) -> RunId:
    """Split a run id at its first ``:`` into flow name and local id.

    Raises:
        InvalidRunIdError: The text is not a valid run id.
    """
    colon_at = run_id.find(":")
    if colon_at < 0:
        raise InvalidRunIdError(f'missing ":": {_quote(run_id)}')
    flow = validate_flow_name(run_id[:colon_at])
    local_id = run_id[colon_at + 1 :]
    if not is_valid_local_id(local_id):
        raise InvalidRunIdError(_local_id_message(local_id))
    return RunId(flow=flow, local_id=local_id)


def new_local_id(random_bytes: bytes) -> str:
    """Make a 24-character local id ``[a-z0-9]`` starting with a letter from caller-supplied entropy.

    The core reads no randomness; the shell passes e.g. ``os.urandom(LOCAL_ID_ENTROPY_BYTES)``. The bytes are
    read as one big-endian integer and written out in mixed radix (26 for the first character, 36 for the
    rest), so the same bytes always give the same id.

    Example:
        >>> new_local_id(bytes(24))
        'a00000000000000000000000'

    Raises:
        ValueError: Fewer than `LOCAL_ID_ENTROPY_BYTES` bytes were given.
    """
    if len(random_bytes) < LOCAL_ID_ENTROPY_BYTES:
        raise InvalidFieldError(
            "random_bytes", f"must hold at least {LOCAL_ID_ENTROPY_BYTES} bytes, got {len(random_bytes)}"
        )
    number = int.from_bytes(random_bytes, "big")
    number, first = divmod(number, len(_LETTERS))
    # The 23 base-36 digits below the first letter, least significant first, two per step from a table.
    number %= len(_ALPHABET) ** (LOCAL_ID_LENGTH - 1)
    chars = [_LETTERS[first]]
    for _ in range((LOCAL_ID_LENGTH - 1) // 2):
        number, pair = divmod(number, _PAIR_BASE)
        chars.append(_PAIRS[pair])
    chars.append(_ALPHABET[number])  # the 23rd digit: what is left is below 36
    return "".join(chars)
