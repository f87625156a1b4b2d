// The metrics tab (beyond-the-original A11): terminal jobs per hour and per-binding failure rate and durations.

const WINDOWS = [['24h', 24], ['7d', 168], ['30d', 720]];

async function loadMetrics(isCurrent) {
  const view = app.metrics;
  const [data, bindings] = await Promise.all([
    apiCall(withQuery(API.metrics, { hours: view.hours, binding: view.binding })),
    apiCall(API.bindings).catch(() => ({ bindings: [] })),
  ]);
  if (!isCurrent()) return;
  replace($('#view'), metricsToolbar(view, bindings.bindings || []), h('h3', null, 'Terminal jobs per hour'),
    renderSeries(data.series || []), renderMetricsTable(data.bindings || []));
}

function metricsToolbar(view, bindings) {
  const select = h('select', { 'aria-label': 'Binding', onchange: (e) => { view.binding = e.target.value; refreshNow(); } },
    option('', 'All bindings'), bindings.map((b) => option(b, b, b === view.binding)));
  return h('div', { class: 'toolbar windows' }, select, WINDOWS.map(([label, hours]) => h('button', {
    type: 'button', class: hours === view.hours ? 'active' : null,
    onclick: () => { view.hours = hours; refreshNow(); } }, label)));
}

// Bars are relative to the busiest hour; the red part is the failed share.
function renderSeries(series) {
  if (!series.length) return h('p', { class: 'empty' }, 'No data.');
  const peak = Math.max(1, ...series.map((point) => point.total));
  return h('div', { class: 'chart' }, series.map((point) => h('div', {
    class: 'bar', style: `height:${(100 * point.total) / peak}%`,
    title: `${fmtTime(point.at)} / ${point.total} jobs / ${point.failed} failed` },
  h('div', { class: 'failed', style: `height:${point.total ? (100 * point.failed) / point.total : 0}%` }))));
}

function renderMetricsTable(rows) {
  if (!rows.length) return h('p', { class: 'empty' }, 'No results.');
  const head = ['Binding', 'Total', 'Failed', 'Failure rate', 'Avg duration', 'p95 duration', 'Max duration', 'Avg attempts'];
  return h('table', { id: 'metrics-table' }, h('thead', null, h('tr', null, head.map((t) => h('th', null, t)))),
    h('tbody', null, rows.map((row) => h('tr', null, h('td', null, row.binding),
      h('td', { class: 'num' }, row.total), h('td', { class: 'num' }, row.failed),
      h('td', { class: `num${row.failureRate > 0 ? ' rate-bad' : ''}` }, `${(100 * row.failureRate).toFixed(1)}%`),
      h('td', { class: 'num' }, fmtDuration(row.avgDurationMs)), h('td', { class: 'num' }, fmtDuration(row.p95DurationMs)),
      h('td', { class: 'num' }, fmtDuration(row.maxDurationMs)),
      h('td', { class: 'num' }, Number(row.avgAttempts).toFixed(2))))));
}
