"""The fields the pinned wrangler knows in a Worker's config, and a warning for each field it does not (ADR-0182).

wrangler warns of a field it does not know (``Unexpected fields found in top-level field: "compatiblity_date"``)
and goes on without it; the local runtime read such a config in silence, so a typo left a binding or a setting
out with no word. `unexpected_fields` names each field of a config that wrangler does not know, in the top
level and in each section the local runtime reads, with the field probably meant when one is close.

A field is known when the pinned wrangler's ``config-schema.json`` (node_modules/wrangler) lists it there, or
when its validation accepts it though the schema does not (`NOT_IN_SCHEMA`). A field wrangler knows and the
local runtime does not emulate (``kv_namespaces``, ``queues.consumers[].visibility_timeout_ms``) is known.
tests/deploy/test_wrangler_fields.py checks the tables against the schema and against the pinned wrangler
itself, so a wrangler update that adds or drops a field fails there first.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any, Final, cast

import msgspec

__all__ = ["KNOWN_FIELDS", "NOT_IN_SCHEMA", "UnexpectedField", "unexpected_fields"]

NOT_IN_SCHEMA: Final[Mapping[str, frozenset[str]]] = {
    # validateCache; the rest are set by wrangler's readConfig on the config it returns, so its own check
    # (`Object.keys(config)`) passes them too.
    "": frozenset(
        {"cache", "configPath", "definedEnvironments", "targetEnvironment", "topLevelName", "userConfigPath"}
    ),
    "migrations[]": frozenset({"transferred_classes"}),
}
"""Fields the pinned wrangler's validation accepts that its ``config-schema.json`` does not list, by section."""

_SCHEMA_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "": frozenset(
        {
            "$schema",
            "account_id",
            "ai",
            "ai_search",
            "ai_search_namespaces",
            "alias",
            "analytics_engine_datasets",
            "artifacts",
            "assets",
            "base_dir",
            "browser",
            "build",
            "cloudchamber",
            "compatibility_date",
            "compatibility_flags",
            "compliance_region",
            "containers",
            "d1_databases",
            "data_blobs",
            "define",
            "dev",
            "dispatch_namespaces",
            "durable_objects",
            "env",
            "find_additional_modules",
            "first_party_worker",
            "flagship",
            "hyperdrive",
            "images",
            "jsx_factory",
            "jsx_fragment",
            "keep_names",
            "keep_vars",
            "kv_namespaces",
            "legacy_env",
            "limits",
            "logfwdr",
            "logpush",
            "main",
            "media",
            "migrations",
            "minify",
            "mtls_certificates",
            "name",
            "no_bundle",
            "observability",
            "pages_build_output_dir",
            "pipelines",
            "placement",
            "preserve_file_names",
            "preview_urls",
            "previews",
            "python_modules",
            "queues",
            "r2_buckets",
            "ratelimits",
            "route",
            "routes",
            "rules",
            "secrets",
            "secrets_store_secrets",
            "send_email",
            "send_metrics",
            "services",
            "site",
            "stream",
            "streaming_tail_consumers",
            "tail_consumers",
            "text_blobs",
            "triggers",
            "tsconfig",
            "unsafe",
            "unsafe_hello_world",
            "upload_source_maps",
            "vars",
            "vectorize",
            "version_metadata",
            "vpc_networks",
            "vpc_services",
            "wasm_modules",
            "worker_loaders",
            "workers_dev",
            "workflows",
        }
    ),
    "durable_objects": frozenset({"bindings"}),
    "durable_objects.bindings[]": frozenset({"name", "class_name", "script_name", "environment"}),
    "migrations[]": frozenset(
        {"tag", "new_classes", "new_sqlite_classes", "renamed_classes", "deleted_classes"}
    ),
    "queues": frozenset({"producers", "consumers"}),
    "queues.producers[]": frozenset({"binding", "queue", "delivery_delay", "remote"}),
    "queues.consumers[]": frozenset(
        {
            "queue",
            "type",
            "max_batch_size",
            "max_batch_timeout",
            "max_retries",
            "dead_letter_queue",
            "max_concurrency",
            "visibility_timeout_ms",
            "retry_delay",
        }
    ),
    "d1_databases[]": frozenset(
        {
            "binding",
            "database_name",
            "database_id",
            "preview_database_id",
            "migrations_table",
            "migrations_dir",
            "database_internal_env",
            "remote",
        }
    ),
    "analytics_engine_datasets[]": frozenset({"binding", "dataset"}),
    "services[]": frozenset({"binding", "service", "entrypoint", "props", "remote"}),
    "triggers": frozenset({"crons"}),
    "limits": frozenset({"cpu_ms", "subrequests"}),
}

KNOWN_FIELDS: Final[Mapping[str, frozenset[str]]] = {
    section: fields | NOT_IN_SCHEMA.get(section, frozenset()) for section, fields in _SCHEMA_FIELDS.items()
}
"""The fields wrangler knows, by section: ``""`` is the top level, ``name[]`` each object of the list ``name``.
Only the sections the local runtime reads are here; ``vars`` holds any names, ``env.<name>`` is not read."""

_NESTED: Final = ("durable_objects", "queues", "triggers", "limits")
"""Sections that are one object: a field of theirs written at the top level is named with its section."""


class UnexpectedField(msgspec.Struct, frozen=True, kw_only=True):
    """A field wrangler does not know: where it is (``""``: the top level), and the field probably meant."""

    where: str
    field: str
    meant: str | None = None

    def message(self, path: object) -> str:
        """One line naming the file, the place, the field and the one probably meant."""
        place = f"in {self.where}" if self.where else "at the top level"
        hint = f' (did you mean "{self.meant}"?)' if self.meant else ""
        return (
            f'{path}: unexpected field "{self.field}" {place}{hint}: wrangler does not know it, and the local '
            "runtime ignores it"
        )


def unexpected_fields(config: Mapping[str, Any]) -> list[UnexpectedField]:
    """Each field of ``config`` (a parsed wrangler config) that wrangler does not know, section by section."""
    found: list[UnexpectedField] = []
    for section, known in KNOWN_FIELDS.items():
        for where, value in _places(config, section):
            found.extend(
                UnexpectedField(where=where, field=field, meant=_meant(section, field, known))
                for field in value
                if field not in known
            )
    return found


def _places(config: Mapping[str, Any], section: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each object the section names in ``config``, with its path (``queues.consumers[0]``); other shapes are
    left to the loader, which refuses them."""
    places: list[tuple[str, Mapping[str, Any]]] = [("", config)]
    for step in section.split(".") if section else ():
        name, many = (step[:-2], True) if step.endswith("[]") else (step, False)
        deeper: list[tuple[str, Mapping[str, Any]]] = []
        for where, value in places:
            child: Any = value.get(name)
            path = f"{where}.{name}" if where else name
            if many and isinstance(child, list):
                items = cast(list[Any], child)
                deeper.extend(
                    (f"{path}[{i}]", cast(Mapping[str, Any], item))
                    for i, item in enumerate(items)
                    if isinstance(item, dict)
                )
            elif not many and isinstance(child, dict):
                deeper.append((path, cast(Mapping[str, Any], child)))
        places = deeper
    yield from places


def _folded(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _meant(section: str, field: str, known: frozenset[str]) -> str | None:
    """The known field ``field`` most likely stands for: the same name but for case, ``_`` and ``-``
    (``compatibilityDate``); a section's own field written at the top level (``crons``: ``triggers.crons``);
    else a close spelling (``compatiblity_date``, ``durable_object``); else None."""
    by_folded = {_folded(name): name for name in sorted(known)}
    same = by_folded.get(_folded(field))
    if same is not None:
        return same
    if not section:
        for nested in _NESTED:
            if field in KNOWN_FIELDS[nested]:
                return f"{nested}.{field}"
    close = difflib.get_close_matches(_folded(field), list(by_folded), n=1, cutoff=0.8)
    return by_folded[close[0]] if close else None
