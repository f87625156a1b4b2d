"""One helper builds the scheduler Worker's five entry classes from its definition (ADR-0155).

workerd (and ``tsumugi dev``) finds a Worker's Durable Object classes and entrypoints by the names its entry
module binds, so the entry module still binds each class to its name; the helper writes the classes::

    from workers import DurableObject, WorkerEntrypoint

    from tsumugi_scheduler.definition import define_tsumugi
    from tsumugi_scheduler.entry_classes import entry_classes

    TSUMUGI = define_tsumugi(performers=["Hello"])

    TsumugiJobShard, TsumugiScheduler, TsumugiRun, TsumugiRpc, Default = entry_classes(
        TSUMUGI, DurableObject, WorkerEntrypoint, module=__name__
    )

The SDK's base classes are passed in because this library never imports the SDK (ADR-0049). Each class is
named as the entry module binds it (``ENTRY_CLASS_NAMES``, in the order of the tuple), belongs to ``module``,
mixes the library's methods in before the SDK class and carries ``tsumugi = definition``: what five ``class``
statements used to say in every entry module. An entry module that needs more subclasses one of them.
"""

from __future__ import annotations

import inspect
from typing import Final, NamedTuple, cast

from tsumugi_core.exceptions import InvalidTypeError
from tsumugi_scheduler.definition import TsumugiDefinition
from tsumugi_scheduler.entrypoints import DefaultMethods, JobShardMethods, RpcMethods, RunMethods
from tsumugi_scheduler.schedule_entrypoints import SchedulerMethods, ScheduleRpcMethods

__all__ = ["ENTRY_CLASS_NAMES", "EntryClasses", "entry_classes"]


class EntryClasses(NamedTuple):
    """The scheduler Worker's classes, in the order an entry module unpacks them."""

    job_shard: type[JobShardMethods]
    """``TsumugiJobShard``: the JobShard Durable Object (the ``JOB_SHARD`` binding)."""
    scheduler: type[SchedulerMethods]
    """``TsumugiScheduler``: the Scheduler Durable Object (schedules)."""
    run: type[RunMethods]
    """``TsumugiRun``: the Run Durable Object (flow runs)."""
    rpc: type[RpcMethods]
    """``TsumugiRpc``: the producers' RPC entrypoint, with the schedule methods."""
    default: type[DefaultMethods]
    """``Default``: the REST API, the dashboard, the queue consumer and the cron sweep."""


ENTRY_CLASS_NAMES: Final = ("TsumugiJobShard", "TsumugiScheduler", "TsumugiRun", "TsumugiRpc", "Default")
"""The names the classes carry and the entry module binds them to (its wrangler.jsonc names the same)."""


def _sdk_class(field: str, sdk_name: str, value: object) -> type:
    if not inspect.isclass(value):
        rule = f"must be the SDK's class (from workers import {sdk_name}), got {type(value).__name__}"
        raise InvalidTypeError(field, rule)
    return value


def entry_classes(
    definition: TsumugiDefinition, durable_object: type, worker_entrypoint: type, *, module: str
) -> EntryClasses:
    """The five classes of a scheduler Worker for ``definition``, as members of the entry module ``module``.

    >>> from tsumugi_scheduler.definition import define_tsumugi
    >>> class DurableObject:
    ...     def __init__(self, ctx, env): ...
    >>> class WorkerEntrypoint(DurableObject): ...
    >>> definition = define_tsumugi(performers=["Hello"])
    >>> classes = entry_classes(definition, DurableObject, WorkerEntrypoint, module="entry")
    >>> [(c.__name__, c.__module__, c.__mro__[1].__name__) for c in (classes.job_shard, classes.default)]
    [('TsumugiJobShard', 'entry', 'JobShardMethods'), ('Default', 'entry', 'DefaultMethods')]
    """
    given = cast(object, definition)  # callers without a type checker may pass anything
    if not isinstance(given, TsumugiDefinition):
        raise InvalidTypeError("definition", f"must be define_tsumugi(...), got {type(given).__name__}")
    obj = _sdk_class("durable_object", "DurableObject", durable_object)
    entrypoint = _sdk_class("worker_entrypoint", "WorkerEntrypoint", worker_entrypoint)
    bases = (
        (JobShardMethods, obj),
        (SchedulerMethods, obj),
        (RunMethods, obj),
        (ScheduleRpcMethods, RpcMethods, entrypoint),
        (DefaultMethods, entrypoint),
    )
    made = [
        type(name, base, {"__module__": module, "__qualname__": name, "tsumugi": definition})
        for name, base in zip(ENTRY_CLASS_NAMES, bases, strict=True)
    ]
    return EntryClasses(*made)
