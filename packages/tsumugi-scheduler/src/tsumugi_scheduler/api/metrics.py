"""``GET /api/metrics``: failure rate and durations read back from Analytics Engine.

Source: docs/reference/original.md §5.4, A11.

Two readers, one answer shape:

- `AccountSqlReader` (Cloudflare): the account's Analytics Engine SQL API through the Worker's ``fetch``
  (`tsumugi_scheduler._runtime.post_text`; no httpx in a Worker, ADR-0107), configured by the secrets
  ``CF_ACCOUNT_ID`` and ``CF_API_TOKEN`` and the dataset name in ``TSUMUGI_METRICS_DATASET``; the aggregation
  runs upstream, weighted by ``_sample_interval``.
- `BindingReader` (local runtime): a ``TSUMUGI_METRICS`` binding that can answer SQL itself (``query``);
  raw points are aggregated here with the same weighting.

Neither configured: 501 ``metrics is not configured``. Upstream failures: 502 with up to 500 characters of
the upstream text.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from tsumugi_core.exceptions import InvalidFieldError, TsumugiError
from tsumugi_scheduler._runtime import PostText, post_text
from tsumugi_scheduler.api.answers import ApiError, bad_request, json_response
from tsumugi_scheduler.api.context import env_of, first_values
from tsumugi_scheduler.readmodel.job_query import MAX_EXCLUDED
from tsumugi_scheduler.timing import time_source

__all__ = [
    "DEFAULT_BUCKET_MINUTES",
    "DEFAULT_HOURS",
    "MAX_BUCKET_MINUTES",
    "MAX_HOURS",
    "AccountSqlReader",
    "BindingMetrics",
    "BindingReader",
    "HourMetrics",
    "MetricsReader",
    "MetricsReport",
    "MetricsUnavailableError",
    "aggregate_points",
    "get_metrics",
    "reader_for",
]

DEFAULT_HOURS: Final = 24
MAX_HOURS: Final = 720
DEFAULT_BUCKET_MINUTES: Final = 60
MAX_BUCKET_MINUTES: Final = 1_440
UPSTREAM_TEXT_CHARS: Final = 500
QUERY_TIMEOUT_S: Final = 10.0
_NAME_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FAILED: Final = ("FAILED", "STALLED")
_HOUR_MS: Final = 3_600_000


class BindingMetrics(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Terminal jobs of one binding in the window (durations in ms)."""

    binding: str
    total: int
    failed: int
    failure_rate: float
    avg_duration_ms: float
    max_duration_ms: float
    p95_duration_ms: float
    avg_attempts: float
    p50_duration_ms: float
    p99_duration_ms: float


class HourMetrics(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Terminal jobs that finished in one bucket (``at`` = its start, epoch ms; an hour unless asked)."""

    at: int
    total: int
    failed: int
    avg_duration_ms: float
    p50_duration_ms: float
    p95_duration_ms: float
    p99_duration_ms: float


class MetricsReport(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The answer of ``GET /api/metrics``: ``series`` holds only the buckets that saw a terminal job."""

    hours: int
    bindings: list[BindingMetrics]
    series: list[HourMetrics]
    bucket_ms: int = _HOUR_MS


class MetricsUnavailableError(TsumugiError):
    """The metrics store refused or failed; the message is the upstream text."""


class MetricsReader(Protocol):
    """Reads the window of the last ``hours`` (optionally one binding), the series in ``bucket_ms`` buckets."""

    async def read(
        self, hours: int, binding: str | None, bucket_ms: int = _HOUR_MS, exclude: Sequence[str] = ()
    ) -> MetricsReport:
        """The report.

        Raises:
            MetricsUnavailableError: the store failed.
        """
        ...


def _binding_terms(binding: str | None, exclude: Sequence[str]) -> str:
    """`` AND blob2 = ...`` / `` AND blob2 NOT IN (...)``; every name was checked against ``_NAME_RE``."""
    for name in (binding, *exclude):
        if name is not None and not _NAME_RE.match(name):
            # it is interpolated into SQL
            raise InvalidFieldError("binding", f"{name!r} is not a valid binding name")
    terms = f" AND blob2 = '{binding}'" if binding else ""
    if exclude:
        quoted = ", ".join(f"'{name}'" for name in exclude)
        terms += f" AND blob2 NOT IN ({quoted})"
    return terms


def _num(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


def _weighted_quantiles(values: list[tuple[float, float]], *qs: float) -> list[float]:
    """The smallest value whose cumulative weight reaches ``q`` of the total, for each ``q``."""
    ordered = sorted(values)
    total = sum(w for _, w in ordered)
    found: list[float] = []
    for q in qs:
        seen, answer = 0.0, ordered[-1][0] if ordered else 0.0
        for value, weight in ordered:
            seen += weight
            if seen >= q * total:
                answer = value
                break
        found.append(answer)
    return found


def _bucket(at: int, rows: list[tuple[str, float, float]]) -> HourMetrics:
    weight = sum(r[2] for r in rows)
    p50, p95, p99 = _weighted_quantiles([(r[1], r[2]) for r in rows], 0.5, 0.95, 0.99)
    return HourMetrics(
        at=at,
        total=round(weight),
        failed=round(sum(r[2] for r in rows if r[0] in _FAILED)),
        avg_duration_ms=sum(r[1] * r[2] for r in rows) / weight,
        p50_duration_ms=p50,
        p95_duration_ms=p95,
        p99_duration_ms=p99,
    )


def aggregate_points(
    points: Iterable[Mapping[str, Any]], hours: int, bucket_ms: int = _HOUR_MS
) -> MetricsReport:
    """Aggregate raw points (``state``, ``binding``, ``attempts``, ``duration``, ``weight``, ``at_ms``).

    Weighted by the sample interval, as the upstream query is, so sampling does not skew the figures. The
    series falls in ``bucket_ms`` buckets aligned on the epoch (hours by default).
    """
    by_binding: dict[str, list[tuple[str, float, float, float]]] = {}
    by_hour: dict[int, list[tuple[str, float, float]]] = {}
    for p in points:
        weight = _num(p.get("weight")) or 1.0
        state, duration = str(p.get("state")), _num(p.get("duration"))
        by_binding.setdefault(str(p.get("binding")), []).append(
            (state, _num(p.get("attempts")), duration, weight)
        )
        hour = int(_num(p.get("at_ms"))) // bucket_ms * bucket_ms
        by_hour.setdefault(hour, []).append((state, duration, weight))
    bindings: list[BindingMetrics] = []
    for name, rows in by_binding.items():
        total = sum(r[3] for r in rows)
        failed = sum(r[3] for r in rows if r[0] in _FAILED)
        p50, p95, p99 = _weighted_quantiles([(r[2], r[3]) for r in rows], 0.5, 0.95, 0.99)
        bindings.append(
            BindingMetrics(
                binding=name,
                total=round(total),
                failed=round(failed),
                failure_rate=failed / total if total else 0.0,
                avg_duration_ms=sum(r[2] * r[3] for r in rows) / total,
                max_duration_ms=max(r[2] for r in rows),
                p95_duration_ms=p95,
                avg_attempts=sum(r[1] * r[3] for r in rows) / total,
                p50_duration_ms=p50,
                p99_duration_ms=p99,
            )
        )
    bindings.sort(key=lambda b: (-b.total, b.binding))
    series = [_bucket(at, rows) for at, rows in sorted(by_hour.items())]
    return MetricsReport(hours=hours, bindings=bindings, series=series, bucket_ms=bucket_ms)


class BindingReader:
    """The local runtime's ``TSUMUGI_METRICS``, when the binding answers SQL (``query`` over its dataset)."""

    def __init__(self, binding: Any) -> None:
        """Read through ``binding.query(sql)``; the dataset's view is named ``binding.dataset``."""
        self._binding = binding

    async def read(
        self, hours: int, binding: str | None, bucket_ms: int = _HOUR_MS, exclude: Sequence[str] = ()
    ) -> MetricsReport:
        """Raw points of the window, aggregated here."""
        since = time_source().now_ms() - hours * _HOUR_MS
        dataset = str(getattr(self._binding, "dataset", "TSUMUGI_METRICS"))
        # Both interpolated values are checked: the dataset by the runtime, the binding by the route.
        where = f"timestamp_ms > {int(since)}" + _binding_terms(binding, exclude)
        sql = (
            "SELECT blob1 AS state, blob2 AS binding, double1 AS attempts, double2 AS duration, "
            f'_sample_interval AS weight, timestamp_ms AS at_ms FROM "{dataset}" WHERE {where}'
        )
        try:
            rows = self._binding.query(sql)
        except Exception as exc:
            raise MetricsUnavailableError(str(exc)) from None
        try:
            return aggregate_points(rows, hours, bucket_ms)
        except (ValueError, TypeError, AttributeError) as exc:  # rows that are not the points asked for
            raise MetricsUnavailableError(f"metrics store answered unreadable rows: {exc}") from None


def _at_ms(text: Any) -> int:
    # ClickHouse answers "YYYY-MM-DD hh:mm:ss" in UTC; ISO 8601 (with or without a zone) is read as well.
    stamp = datetime.datetime.fromisoformat(str(text))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.UTC)
    return int(stamp.timestamp() * 1000)


def _binding_row(row: Mapping[str, Any]) -> BindingMetrics:
    total, failed = _num(row.get("total")), _num(row.get("failed"))
    return BindingMetrics(
        binding=str(row.get("binding")),
        total=round(total),
        failed=round(failed),
        failure_rate=failed / total if total else 0.0,
        avg_duration_ms=_num(row.get("avg_duration")),
        max_duration_ms=_num(row.get("max_duration")),
        p95_duration_ms=_num(row.get("p95_duration")),
        avg_attempts=_num(row.get("avg_attempts")),
        p50_duration_ms=_num(row.get("p50_duration")),
        p99_duration_ms=_num(row.get("p99_duration")),
    )


def _hour_row(row: Mapping[str, Any]) -> HourMetrics:
    return HourMetrics(
        at=_at_ms(row.get("at")),
        total=round(_num(row.get("total"))),
        failed=round(_num(row.get("failed"))),
        avg_duration_ms=_num(row.get("avg_duration")),
        p50_duration_ms=_num(row.get("p50_duration")),
        p95_duration_ms=_num(row.get("p95_duration")),
        p99_duration_ms=_num(row.get("p99_duration")),
    )


def _quantiles_sql() -> str:
    return ", ".join(
        f"quantileWeighted({q})(double2, _sample_interval) AS p{name}_duration"
        for q, name in ((0.5, "50"), (0.95, "95"), (0.99, "99"))
    )


def _data_rows(text: str) -> list[Mapping[str, Any]]:
    """The ``data`` rows of a ``FORMAT JSON`` answer.

    Raises:
        MetricsUnavailableError: the body is not JSON, or ``data`` is not a list of objects.
    """
    try:
        data = json.loads(text).get("data")
    except (ValueError, AttributeError):  # not JSON (an HTML error page), or JSON but not an object
        raise MetricsUnavailableError(f"metrics query answered no JSON: {text[:200]}") from None
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):  # pyright: ignore[reportUnknownVariableType]
        raise MetricsUnavailableError("metrics query answered data that is not a list of rows")
    rows: list[Mapping[str, Any]] = data  # pyright: ignore[reportUnknownVariableType]
    return rows


class AccountSqlReader:
    """Cloudflare's Analytics Engine SQL API for one account and dataset."""

    def __init__(self, account_id: str, api_token: str, dataset: str, post: PostText | None = None) -> None:
        """Read ``dataset`` of ``account_id`` with ``api_token`` (Account Analytics read).

        ``post`` sends the query (default: the Worker's ``fetch``, `tsumugi_scheduler._runtime.post_text`).
        """
        self._url = f"https://api.cloudflare.com/client/v4/accounts/{account_id}/analytics_engine/sql"
        self._token = api_token
        self._dataset = dataset
        self._post: PostText = post or post_text

    async def _query(self, sql: str) -> list[Mapping[str, Any]]:
        headers = {"authorization": f"Bearer {self._token}", "content-type": "text/plain"}
        try:
            status, text = await self._post(self._url, sql, headers, QUERY_TIMEOUT_S)
        except TimeoutError:
            raise MetricsUnavailableError(
                f"metrics query failed: no answer within {QUERY_TIMEOUT_S:g} s"
            ) from None
        except Exception as exc:  # whatever fetch raises: a refused connection, a URL the account id broke
            raise MetricsUnavailableError(f"metrics query failed: {exc}") from None
        if not 200 <= status < 300:
            raise MetricsUnavailableError(text[:UPSTREAM_TEXT_CHARS])
        return _data_rows(text)

    async def read(
        self, hours: int, binding: str | None, bucket_ms: int = _HOUR_MS, exclude: Sequence[str] = ()
    ) -> MetricsReport:
        """Two statements upstream: per binding, and per bucket (whole minutes)."""
        where = f"timestamp > NOW() - INTERVAL '{int(hours)}' HOUR" + _binding_terms(binding, exclude)
        failed = "IF(blob1 IN ('FAILED', 'STALLED'), _sample_interval, 0)"
        per_binding = (
            f"SELECT blob2 AS binding, SUM(_sample_interval) AS total, SUM({failed}) AS failed, "
            "SUM(double2 * _sample_interval) / SUM(_sample_interval) AS avg_duration, MAX(double2) AS max_duration, "
            f"{_quantiles_sql()}, "
            "SUM(double1 * _sample_interval) / SUM(_sample_interval) AS avg_attempts "
            f"FROM {self._dataset} WHERE {where} GROUP BY binding ORDER BY total DESC FORMAT JSON"
        )
        minutes = max(1, bucket_ms // 60_000)
        per_hour = (
            f"SELECT toStartOfInterval(timestamp, INTERVAL '{int(minutes)}' MINUTE) AS at, "
            f"SUM(_sample_interval) AS total, SUM({failed}) AS failed, "
            f"SUM(double2 * _sample_interval) / SUM(_sample_interval) AS avg_duration, {_quantiles_sql()} "
            f"FROM {self._dataset} WHERE {where} GROUP BY at ORDER BY at ASC FORMAT JSON"
        )
        rows = await self._query(per_binding)
        hours_rows = await self._query(per_hour)
        try:
            bindings = [_binding_row(r) for r in rows]
            series = [_hour_row(r) for r in hours_rows]
        except (ValueError, TypeError, AttributeError) as exc:  # a row the report cannot hold (e.g. odd `at`)
            raise MetricsUnavailableError(f"metrics query answered an unreadable row: {exc}") from None
        return MetricsReport(hours=hours, bindings=bindings, series=series, bucket_ms=minutes * 60_000)


def reader_for(env: Any) -> MetricsReader | None:
    """The reader ``env`` configures: the local binding's SQL, else the account SQL API; None when neither."""
    binding = getattr(env, "TSUMUGI_METRICS", None)
    if binding is not None and callable(getattr(binding, "query", None)):
        return BindingReader(binding)
    account, token = getattr(env, "CF_ACCOUNT_ID", None), getattr(env, "CF_API_TOKEN", None)
    dataset = getattr(env, "TSUMUGI_METRICS_DATASET", None)
    if account and token and dataset and _NAME_RE.match(str(dataset)):
        return AccountSqlReader(str(account), str(token), str(dataset))
    return None


def _hours(text: str | None) -> int:
    if text is None or text == "":
        return DEFAULT_HOURS
    try:
        value = float(text)
    except ValueError:
        raise bad_request("hours must be a number") from None
    if not math.isfinite(value):
        raise bad_request("hours must be a number")
    hours = math.floor(value)
    if hours < 1:
        raise bad_request("hours must be at least 1")
    if hours > MAX_HOURS:
        raise bad_request(f"hours must not exceed {MAX_HOURS}")
    return hours


def _bucket_minutes(text: str | None) -> int:
    if text is None or text == "":
        return DEFAULT_BUCKET_MINUTES
    try:
        value = int(text)
    except ValueError:
        raise bad_request("bucket_minutes must be a whole number") from None
    if not 1 <= value <= MAX_BUCKET_MINUTES:
        raise bad_request(f"bucket_minutes must be 1..{MAX_BUCKET_MINUTES}")
    return value


async def get_metrics(request: Request) -> Response:
    """``GET /api/metrics?hours=&binding=&bucket_minutes=``."""
    params = first_values(request)
    hours = _hours(params.get("hours"))
    bucket_ms = _bucket_minutes(params.get("bucket_minutes")) * 60_000
    binding = params.get("binding") or None
    if binding is not None and not _NAME_RE.match(binding):
        raise bad_request("binding is not a valid name")  # it is interpolated into SQL
    # The dashboard leaves the notice bindings out, as its job list does (issue 26): their jobs would count
    # in the totals and the failure rate.
    names = (n.strip() for n in (params.get("exclude_bindings") or "").split(","))
    exclude = list(dict.fromkeys(n for n in names if n))
    for name in exclude:
        if not _NAME_RE.match(name):
            rule = f"must list binding names, got {name!r}"
            body = {"error": f"exclude_bindings {rule}", "field": "exclude_bindings", "rule": rule}
            raise ApiError(400, body)
    exclude = exclude[:MAX_EXCLUDED]  # as the job list reads it: the first 20 count
    reader = reader_for(env_of(request))
    if reader is None:
        raise ApiError(501, {"error": "metrics is not configured"})
    try:
        report = await reader.read(hours, binding, bucket_ms, exclude)
    except MetricsUnavailableError as exc:
        raise ApiError(502, {"error": str(exc)[:UPSTREAM_TEXT_CHARS]}) from None
    return json_response(200, report)
