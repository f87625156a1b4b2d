"""The part of a Worker's wrangler configuration (jsonc, json or toml) that the local runtime honours."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from tsumugi_dev.dev_vars import DevVarsError, read_dev_vars
from tsumugi_dev.invocation import SUBREQUESTS_PER_INVOCATION
from tsumugi_dev.jsonc import loads_jsonc
from tsumugi_dev.wrangler_cron import WranglerCronError, parse_wrangler_cron
from tsumugi_dev.wrangler_fields import unexpected_fields

__all__ = [
    "CONFIG_NAMES",
    "AnalyticsDatasetConfig",
    "ConfigError",
    "D1DatabaseConfig",
    "DurableObjectBindingConfig",
    "QueueConsumerConfig",
    "QueueProducerConfig",
    "ServiceBindingConfig",
    "WorkerConfig",
    "find_configs",
    "load_config",
]

CONFIG_NAMES = ("wrangler.json", "wrangler.jsonc", "wrangler.toml")
"""The file names wrangler looks for, in its order."""
MAX_SUBREQUESTS = 10_000_000
"""The highest ``limits.subrequests`` Cloudflare accepts (Workers Paid; developers.cloudflare.com/workers/platform/limits/)."""


class ConfigError(ValueError):
    """A wrangler configuration the runtime cannot use; the message names the file, the field and the rule."""


class DurableObjectBindingConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``durable_objects.bindings[]``."""

    name: str
    class_name: str
    script_name: str | None = None


class QueueProducerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``queues.producers[]``; ``delivery_delay`` in seconds."""

    binding: str
    queue: str
    delivery_delay: int = 0


class QueueConsumerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``queues.consumers[]`` with Cloudflare's defaults (timeouts and delays in seconds)."""

    queue: str
    max_batch_size: int = 10
    max_batch_timeout: float = 5
    max_retries: int = 3
    dead_letter_queue: str | None = None
    retry_delay: int = 0
    max_concurrency: int | None = None


class D1DatabaseConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``d1_databases[]``; ``migrations_dir`` is relative to the config file."""

    binding: str
    database_name: str
    database_id: str = ""
    migrations_dir: str = "migrations"


class AnalyticsDatasetConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``analytics_engine_datasets[]``; the dataset defaults to the binding name."""

    binding: str
    dataset: str | None = None


class ServiceBindingConfig(msgspec.Struct, frozen=True, kw_only=True):
    """``services[]``: a binding to another Worker's entrypoint (``Default`` when absent)."""

    binding: str
    service: str
    entrypoint: str | None = None


class WorkerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One Worker as the runtime sees it.

    ``vars`` holds the config's vars with the ``.dev.vars`` secrets over them (as under ``wrangler dev``);
    ``secret_names`` says which of them are secrets, so tools can list them without their values.
    ``warnings`` are the file's fields wrangler does not know, one line each (its callers show them).
    """

    name: str
    main: Path
    path: Path
    vars: dict[str, Any] = {}
    secret_names: tuple[str, ...] = ()
    durable_objects: tuple[DurableObjectBindingConfig, ...] = ()
    sqlite_classes: tuple[str, ...] = ()
    queue_producers: tuple[QueueProducerConfig, ...] = ()
    queue_consumers: tuple[QueueConsumerConfig, ...] = ()
    d1_databases: tuple[D1DatabaseConfig, ...] = ()
    analytics_datasets: tuple[AnalyticsDatasetConfig, ...] = ()
    services: tuple[ServiceBindingConfig, ...] = ()
    crons: tuple[str, ...] = ()
    subrequest_limit: int = SUBREQUESTS_PER_INVOCATION
    """``limits.subrequests``: subrequests one invocation may make (Cloudflare's default without it)."""
    warnings: tuple[str, ...] = ()

    @property
    def directory(self) -> Path:
        """The folder holding the config file (relative paths start here)."""
        return self.path.parent

    def with_secrets(self, secrets: Mapping[str, str]) -> WorkerConfig:
        """A copy with ``secrets`` set over the current vars and secrets (a test's or a tool's secrets)."""
        names = tuple(sorted({*self.secret_names, *secrets}))
        return msgspec.structs.replace(self, vars={**self.vars, **secrets}, secret_names=names)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the file ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: must be UTF-8 text (invalid byte at offset {exc.start})") from None
    try:
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else loads_jsonc(text)
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix.lstrip('.')}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be an object")
    return data  # pyright: ignore[reportUnknownVariableType]


def _convert(path: Path, field: str, value: Any, kind: Any) -> Any:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: {field}: {exc}") from exc


def _check_range(path: Path, field: str, value: float, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{path}: {field} must be between {low:g} and {high:g} (got {value:g})")


def _consumers(path: Path, raw: Any) -> tuple[QueueConsumerConfig, ...]:
    consumers: tuple[QueueConsumerConfig, ...] = _convert(
        path, "queues.consumers", raw, tuple[QueueConsumerConfig, ...]
    )
    for i, consumer in enumerate(consumers):
        where = f"queues.consumers[{i}]"
        _check_range(path, f"{where}.max_batch_size", consumer.max_batch_size, 1, 100)
        _check_range(path, f"{where}.max_batch_timeout", consumer.max_batch_timeout, 0, 60)
        _check_range(path, f"{where}.max_retries", consumer.max_retries, 0, 100)
        _check_range(path, f"{where}.retry_delay", consumer.retry_delay, 0, 43_200)
        if consumer.max_concurrency is not None:  # -1 was kept, and the consumer then never delivered
            _check_range(path, f"{where}.max_concurrency", consumer.max_concurrency, 1, 250)
    return consumers


def _producers(path: Path, raw: Any) -> tuple[QueueProducerConfig, ...]:
    producers: tuple[QueueProducerConfig, ...] = _convert(
        path, "queues.producers", raw, tuple[QueueProducerConfig, ...]
    )
    for i, producer in enumerate(producers):  # a bad delay failed every send later, naming no config key
        _check_range(path, f"queues.producers[{i}].delivery_delay", producer.delivery_delay, 0, 43_200)
    return producers


def _sqlite_classes(path: Path, raw: Any) -> tuple[str, ...]:
    migrations: list[dict[str, Any]] = _convert(path, "migrations", raw, list[dict[str, Any]])
    classes: list[str] = []
    for migration in migrations:
        field = "migrations[].new_sqlite_classes"
        classes.extend(_convert(path, field, migration.get("new_sqlite_classes", []), tuple[str, ...]))
    return tuple(classes)


def _secrets(path: Path) -> dict[str, str]:
    try:
        return dict(read_dev_vars(path.parent))
    except DevVarsError as exc:
        raise ConfigError(str(exc)) from exc


def _crons(path: Path, raw: Any) -> tuple[str, ...]:
    crons: tuple[str, ...] = _convert(path, "triggers.crons", raw, tuple[str, ...])
    for i, expression in enumerate(crons):
        try:
            parse_wrangler_cron(expression)
        except WranglerCronError as exc:
            raise ConfigError(f"{path}: triggers.crons[{i}]: {exc}") from None
    return crons


def _subrequest_limit(path: Path, raw: Any) -> int:
    limits: dict[str, Any] = _convert(path, "limits", raw, dict[str, Any])
    value = limits.get("subrequests", SUBREQUESTS_PER_INVOCATION)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SUBREQUESTS:
        raise ConfigError(
            f"{path}: limits.subrequests must be an integer between 1 and {MAX_SUBREQUESTS} (got {value!r})"
        )
    return value


def _required_str(path: Path, data: dict[str, Any], field: str) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: {field} is required and must be a non-empty string")
    return value


def load_config(path: str | Path) -> WorkerConfig:
    """Read one wrangler config file (``.json``, ``.jsonc`` or ``.toml``).

    A field wrangler does not know is no error, as under wrangler: the config's ``warnings`` name each one.

    Raises:
        ConfigError: the file is missing or malformed, or a field breaks a rule (the message names both).
    """
    path = Path(path).resolve()
    data = _read(path)
    name = _required_str(path, data, "name")
    main = path.parent / _required_str(path, data, "main")
    if main.suffix != ".py":
        raise ConfigError(f"{path}: main must name a Python module ending in .py (got {main.name})")
    queues: dict[str, Any] = _convert(path, "queues", data.get("queues", {}), dict[str, Any])
    durable: dict[str, Any] = _convert(
        path, "durable_objects", data.get("durable_objects", {}), dict[str, Any]
    )
    triggers: dict[str, Any] = _convert(path, "triggers", data.get("triggers", {}), dict[str, Any])
    config = WorkerConfig(
        name=name,
        main=main,
        path=path,
        vars=_convert(path, "vars", data.get("vars", {}), dict[str, Any]),
        durable_objects=_convert(
            path, "durable_objects.bindings", durable.get("bindings", []), list[DurableObjectBindingConfig]
        ),
        sqlite_classes=_sqlite_classes(path, data.get("migrations", [])),
        queue_producers=_producers(path, queues.get("producers", [])),
        queue_consumers=_consumers(path, queues.get("consumers", [])),
        d1_databases=_convert(
            path, "d1_databases", data.get("d1_databases", []), tuple[D1DatabaseConfig, ...]
        ),
        analytics_datasets=_convert(
            path,
            "analytics_engine_datasets",
            data.get("analytics_engine_datasets", []),
            list[AnalyticsDatasetConfig],
        ),
        services=_convert(path, "services", data.get("services", []), tuple[ServiceBindingConfig, ...]),
        crons=_crons(path, triggers.get("crons", [])),
        subrequest_limit=_subrequest_limit(path, data.get("limits", {})),
        warnings=tuple(field.message(path) for field in unexpected_fields(data)),
    )
    _check_sqlite_classes(config)
    _check_unique_bindings(config)
    return config.with_secrets(_secrets(path))


def _check_unique_bindings(config: WorkerConfig) -> None:
    # ``env`` holds one value per name: wrangler refuses a config that gives two bindings the same name (of one
    # kind or of several), where the runtime would have kept the last one silently.
    kinds: dict[str, list[str]] = {}
    for kind, names in (
        ("durable_objects.bindings", [b.name for b in config.durable_objects]),
        ("queues.producers", [p.binding for p in config.queue_producers]),
        ("d1_databases", [d.binding for d in config.d1_databases]),
        ("analytics_engine_datasets", [a.binding for a in config.analytics_datasets]),
        ("services", [s.binding for s in config.services]),
    ):
        for name in names:
            if not name:
                raise ConfigError(f"{config.path}: {kind}: a binding name must be a non-empty string")
            kinds.setdefault(name, []).append(kind)
    for name, where in kinds.items():
        if len(where) > 1:
            raise ConfigError(
                f"{config.path}: binding {name} is given {len(where)} times (in {', '.join(where)}); "
                "binding names must be unique, each is one name in env"
            )


def _check_sqlite_classes(config: WorkerConfig) -> None:
    # The SQL API exists only for SQLite-backed classes, declared in a migration's new_sqlite_classes.
    for binding in config.durable_objects:
        if binding.script_name in (None, config.name) and binding.class_name not in config.sqlite_classes:
            raise ConfigError(
                f"{config.path}: durable_objects.bindings: class {binding.class_name} must be listed in a "
                "migration's new_sqlite_classes (the local runtime hosts SQLite-backed Durable Objects only)"
            )


def find_configs(directory: str | Path) -> list[Path]:
    """The wrangler config in ``directory``, found in wrangler's order (empty when there is none)."""
    for name in CONFIG_NAMES:
        candidate = Path(directory) / name
        if candidate.is_file():
            return [candidate]
    return []
