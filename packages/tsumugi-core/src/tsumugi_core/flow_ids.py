"""The ids a run gives its nodes' jobs and its subflows' child runs (ADR-0115).

Each is derived, so a start the Run object repeats after a crash names the same job or child run and the
receiver absorbs it. Each is unique to one incarnation of the run (its ``nonce``, drawn when the run is
stored: a run id started again after its object was swept makes new ids), to the parent run (a child run id
hashes the whole parent run id, flow included), and to the node's resume count (``gen``: a resumed node gets a
new job or child run). The nonce never leaves the Run object, so no caller can compute an id before the run
uses it (a job pinned at that id first would be adopted by the node).

Example:
    >>> node_job_id("Hello", 1, "greetings:a", "n0nce", "names", 0)
    'Hello#0:n733e78acdbf6f174d51e2196'
    >>> child_run_id("leaf", "parent:p", "n0nce", "sub", 0)
    'leaf:p-sub-e2183b228574'
"""

from __future__ import annotations

from typing import Final

from tsumugi_core.id_digest import id_digest
from tsumugi_core.ids import format_job_id, format_run_id, parse_run_id
from tsumugi_core.sharding import resolve_shard

__all__ = ["CHILD_DIGEST_BYTES", "child_run_id", "node_job_id"]

CHILD_DIGEST_BYTES: Final = 6
"""Bytes of the digest ending a child run id (12 hex characters)."""


def node_job_id(binding: str, shards: int, run_id: str, nonce: str, node_id: str, gen: int) -> str:
    """The job id of node ``node_id``'s ``gen``-th start in the run incarnation ``nonce``.

    Its shard follows the run id (the run's jobs share a partition key), among ``shards`` shards.
    """
    shard = resolve_shard(binding, shards, run_id) if shards > 1 else 0
    return format_job_id(binding, shard, f"n{id_digest((run_id, nonce, node_id, str(gen)), 12)}")


def child_run_id(flow: str, parent_run_id: str, nonce: str, node_id: str, gen: int) -> str:
    """``<flow>:<parentLocal>-<nodeId>-<digest>``: the child run of node ``node_id``'s ``gen``-th start.

    The readable part says where the child comes from; the digest (of the whole parent run id, its nonce, the
    node and ``gen``) makes it the parent's own: parents of different flows sharing a local id, a resumed node
    and a parent started again under the same id each get their own child run.

    Raises:
        InvalidRunIdError: ``flow`` or ``parent_run_id`` is not valid.
    """
    local = parse_run_id(parent_run_id).local_id
    digest = id_digest((parent_run_id, nonce, node_id, str(gen)), CHILD_DIGEST_BYTES)
    return format_run_id(flow, f"{local}-{node_id}-{digest}")
