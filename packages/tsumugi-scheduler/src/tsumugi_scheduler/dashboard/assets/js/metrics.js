/* global $, API, apiCall, app, durationWords, fmtDuration, h, lineChart, option, refreshNow, replace,
   withQuery */
/* exported loadMetrics */

// The metrics tab (docs/reference/additions.md A11): throughput, failure rate and duration percentiles over
// time as charts (charts.js), for every binding or one, over a chosen range; the per-binding table below.

/** @type {Array<[string, number, number]>} */
const RANGES = [
  ['1 h', 1, 5],
  ['6 h', 6, 15],
  ['24 h', 24, 60],
  ['7 d', 168, 360],
  ['30 d', 720, 1440],
];
const COLORS = {
  completed: '#1a7f37',
  failed: '#cf222e',
  rate: '#cf222e',
  p50: '#0969da',
  p95: '#8250df',
  p99: '#bf3989',
};

function metricsRange(view) {
  return RANGES.find(([, hours]) => hours === view.hours) || RANGES[2];
}

async function loadMetrics(isCurrent) {
  const view = app.metrics;
  const [, hours, bucketMinutes] = metricsRange(view);
  const [data, bindings] = await Promise.all([
    // Notice jobs are left out of "all bindings", as the job list hides them (issue 26).
    apiCall(
      withQuery(API.metrics, {
        hours,
        binding: view.binding,
        bucket_minutes: bucketMinutes,
        exclude_bindings: view.binding ? '' : (app.jobs.notices || []).join(','),
      }),
    ),
    apiCall(API.bindings).catch(() => ({ bindings: [] })),
  ]);
  if (!isCurrent()) return;
  const end = Date.now();
  const bucketMs = data.bucketMs || bucketMinutes * 60e3;
  const start = Math.floor((end - hours * 3600e3) / bucketMs) * bucketMs;
  replace(
    $('#view'),
    metricsToolbar(view, bindings.bindings || []),
    renderTotals(data.bindings || []),
    renderCharts(data.series || [], start, end, bucketMs),
    h('h3', null, 'Per binding'),
    renderMetricsTable(data.bindings || []),
  );
}

function metricsToolbar(view, bindings) {
  const select = h(
    'select',
    {
      'aria-label': 'Binding',
      id: 'metrics-binding',
      onchange: (e) => {
        view.binding = e.target.value;
        refreshNow();
      },
    },
    option('', 'All bindings'),
    bindings.map((b) => option(b, b, b === view.binding)),
  );
  return h(
    'div',
    { class: 'toolbar windows' },
    select,
    h(
      'span',
      { class: 'segmented', role: 'group', 'aria-label': 'Time range' },
      RANGES.map(([label, hours]) =>
        h(
          'button',
          {
            type: 'button',
            class: hours === metricsRange(view)[1] ? 'active' : null,
            'aria-pressed': String(hours === metricsRange(view)[1]),
            onclick: () => {
              view.hours = hours;
              refreshNow();
            },
          },
          label,
        ),
      ),
    ),
  );
}

function renderTotals(rows) {
  const total = rows.reduce((sum, r) => sum + r.total, 0);
  const failed = rows.reduce((sum, r) => sum + r.failed, 0);
  const slowest = rows.reduce((max, r) => Math.max(max, r.p95DurationMs || 0), 0);
  const tile = (label, value, bad) =>
    h(
      'div',
      { class: `tile${bad ? ' bad' : ''}` },
      h('span', { class: 'muted' }, label),
      h('strong', null, value),
    );
  return h(
    'div',
    { class: 'tiles', id: 'metrics-totals' },
    tile('Finished jobs', total.toLocaleString()),
    tile('Failed', failed.toLocaleString(), failed > 0),
    tile('Failure rate', total ? `${((100 * failed) / total).toFixed(1)} %` : '\u2014', failed > 0),
    tile(rows.length === 1 ? 'p95 duration' : 'Slowest p95', rows.length ? fmtDuration(slowest) : '\u2014'),
  );
}

// Every bucket of the range, so a quiet bucket reads as 0 jobs (and as a gap for rates and durations).
function bucketsOf(series, start, end, bucketMs) {
  const byAt = new Map(series.map((p) => [p.at, p]));
  const buckets = [];
  for (let at = start; at <= end; at += bucketMs) buckets.push([at, byAt.get(at) || null]);
  return buckets;
}

function chartWidths() {
  const style = getComputedStyle($('#view'));
  const inner = $('#view').clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const full = Math.max(260, Math.min(1400, Math.floor(inner)));
  return { full, half: full >= 900 ? Math.floor((full - 16) / 2) : full };
}

function renderCharts(series, start, end, bucketMs) {
  if (!series.length)
    return h('p', { class: 'empty', id: 'metrics-empty' }, 'No finished jobs in this range.');
  const buckets = bucketsOf(series, start, end, bucketMs);
  const mid = (at) => at + bucketMs / 2; // a bucket's value belongs to its middle
  const { full, half } = chartWidths();
  const per = `jobs per ${bucketMs === 3600e3 ? 'hour' : bucketMs === 86400e3 ? 'day' : durationWords(bucketMs)}`;
  /** @type {Array<[number, number | null]>} */
  const rates = buckets.map(([at, p]) => [mid(at), p && p.total ? (100 * p.failed) / p.total : null]);
  const peakRate = Math.max(0, ...rates.map(([, r]) => r || 0));
  const throughput = lineChart({
    id: 'chart-throughput',
    title: 'Throughput',
    unit: per,
    width: full,
    start,
    end: end + bucketMs / 2,
    minStep: 1,
    yFormat: (v) => String(Math.round(v)),
    series: [
      {
        name: 'completed',
        color: COLORS.completed,
        points: buckets.map(([at, p]) => [mid(at), p ? p.total - p.failed : 0]),
      },
      { name: 'failed', color: COLORS.failed, points: buckets.map(([at, p]) => [mid(at), p ? p.failed : 0]) },
    ],
  });
  const rate = lineChart({
    id: 'chart-failure-rate',
    title: 'Failure rate',
    unit: '% of finished jobs',
    width: half,
    start,
    end: end + bucketMs / 2,
    yMax: Math.min(100, Math.max(10, Math.ceil(peakRate / 10) * 10)),
    yFormat: (v) => `${Math.round(v)} %`,
    series: [{ name: 'failure rate', color: COLORS.rate, points: rates }],
  });
  const durations = lineChart({
    id: 'chart-durations',
    title: 'Duration',
    unit: 'percentiles per bucket',
    width: half,
    start,
    end: end + bucketMs / 2,
    yFormat: fmtAxisDuration,
    series: ['p50', 'p95', 'p99'].map((q) => ({
      name: q,
      color: COLORS[q],
      points: buckets.map(([at, p]) => [mid(at), p ? p[`${q}DurationMs`] : null]),
    })),
  });
  return h('div', { class: 'charts' }, h('div', { class: 'chart-wide' }, throughput), rate, durations);
}

function fmtAxisDuration(ms) {
  if (ms === 0) return '0';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${+(ms / 1000).toFixed(1)} s`;
  return durationWords(ms);
}

function renderMetricsTable(rows) {
  if (!rows.length) return h('p', { class: 'empty' }, 'No results.');
  const head = ['Binding', 'Total', 'Failed', 'Failure rate', 'p50', 'p95', 'p99', 'Max', 'Avg attempts'];
  const duration = (ms) => h('td', { class: 'num' }, fmtDuration(ms));
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { id: 'metrics-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          head.map((t) => h('th', null, t)),
        ),
      ),
      h(
        'tbody',
        null,
        rows.map((row) =>
          h(
            'tr',
            null,
            h('td', null, row.binding),
            h('td', { class: 'num' }, row.total),
            h('td', { class: 'num' }, row.failed),
            h(
              'td',
              { class: `num${row.failureRate > 0 ? ' rate-bad' : ''}` },
              `${(100 * row.failureRate).toFixed(1)}%`,
            ),
            duration(row.p50DurationMs),
            duration(row.p95DurationMs),
            duration(row.p99DurationMs),
            duration(row.maxDurationMs),
            h('td', { class: 'num' }, Number(row.avgAttempts).toFixed(2)),
          ),
        ),
      ),
    ),
  );
}
