/* global fmtDuration, fmtTime, h, runLink */
/* exported NODE_STATES, NODE_TERMINAL, childrenByParent, nodeSpans, renderWaterfall, shownState */

// A run's waterfall: every node's bar from when it was scheduled to when it finished, on one time axis.
// waterfallLayout() is pure (nodes, now, expanded ids in; rows and ticks out) so the browser tests can check
// its numbers; renderWaterfall() turns it into HTML (percent positions, so any width works).

const NODE_STATES = [
  'PENDING',
  'SCHEDULED',
  'QUEUED',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'STALLED',
  'SKIPPED',
];
const NODE_TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'STALLED', 'SKIPPED'];
const NODE_UNSUCCESSFUL = ['FAILED', 'CANCELLED', 'STALLED', 'SKIPPED'];

// The state a node is drawn in. A fan-out COMPLETES once its children ended, whatever they did; drawn as is, one
// whose children all failed looked green. It is drawn FAILED when none of its children succeeded and PARTIAL
// when some failed.
function shownState(node, kids) {
  if (!node.container || node.state !== 'COMPLETED') return node.state;
  const failed = kids.filter((k) => NODE_UNSUCCESSFUL.includes(k.state)).length;
  if (!failed) return node.state;
  return failed === kids.length ? 'FAILED' : 'PARTIAL';
}
// Axis steps (ms) from which the smallest giving at most WF_MAX_STEPS intervals is taken.
const WF_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5,
  72e5, 108e5, 216e5, 432e5, 864e5, 1728e5, 6048e5,
];
const WF_MAX_STEPS = 6;
// An expanded container shows at most this many children, those needing attention first (as the original's
// chips: FAILED, STALLED, RUNNING, CANCELLED/SKIPPED, waiting, COMPLETED), in position order; a row counts the rest.
const WF_MAX_CHILDREN = 100;
const WF_ATTENTION = {
  FAILED: 0,
  STALLED: 1,
  RUNNING: 2,
  CANCELLED: 3,
  SKIPPED: 3,
  QUEUED: 4,
  SCHEDULED: 4,
  PENDING: 4,
  COMPLETED: 5,
};

function shownChildren(kids) {
  if (kids.length <= WF_MAX_CHILDREN) return { shown: kids, hidden: [] };
  const rank = (n) => WF_ATTENTION[n.state] ?? 6;
  const chosen = new Set(
    [...kids].sort((a, b) => rank(a) - rank(b) || a.position - b.position).slice(0, WF_MAX_CHILDREN),
  );
  return { shown: kids.filter((k) => chosen.has(k)), hidden: kids.filter((k) => !chosen.has(k)) };
}

// Children by parent id, each list in stored (position) order.
function childrenByParent(nodes) {
  const map = new Map();
  for (const node of [...nodes].sort((a, b) => a.position - b.position)) {
    if (node.parent === null || node.parent === undefined) continue;
    if (!map.has(node.parent)) map.set(node.parent, []);
    map.get(node.parent).push(node);
  }
  return map;
}

// Did the node's work begin? Without an explicit scheduled_at: it has a job or a child run, or it is a fan-out
// container that expanded (children, or settled as COMPLETED over zero items), or its state says so.
function nodeStarted(node, children) {
  if (node.scheduled_at !== undefined) return node.scheduled_at !== null;
  if (node.job_id || node.child_run_id) return true;
  if (node.container)
    return (children.get(node.id) || []).length > 0 || ['RUNNING', 'COMPLETED'].includes(node.state);
  return ['SCHEDULED', 'QUEUED', 'RUNNING'].includes(node.state);
}

// Start and end (epoch ms) of every node; start null = never started. The API's scheduled_at / finished_at
// are used when present; otherwise a node started when it was created or when its last dependency settled
// (a dependency settles with all its descendants), whichever is later, and a terminal node ended at its
// last update. Unfinished nodes end `now`.
function nodeSpans(nodes, now) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const children = childrenByParent(nodes);
  const spans = new Map();
  const settled = new Map();
  const endOf = (node) => {
    if (!NODE_TERMINAL.includes(node.state)) return now;
    return node.finished_at !== undefined && node.finished_at !== null ? node.finished_at : node.updated_at;
  };
  const settledAt = (node, seen) => {
    if (settled.has(node.id)) return settled.get(node.id);
    if (seen.has(node.id)) return endOf(node); // malformed (cyclic) parents: stop here
    seen.add(node.id);
    let value = endOf(node);
    for (const child of children.get(node.id) || []) value = Math.max(value, settledAt(child, seen));
    settled.set(node.id, value);
    return value;
  };
  for (const node of nodes) {
    if (!nodeStarted(node, children)) {
      spans.set(node.id, { start: null, end: NODE_TERMINAL.includes(node.state) ? node.updated_at : null });
      continue;
    }
    let start = node.scheduled_at;
    if (start === undefined || start === null) {
      const deps = (node.after || []).map((id) => byId.get(id)).filter((d) => d && d.id !== node.id);
      start = Math.max(node.created_at, ...deps.map((d) => settledAt(d, new Set())));
    }
    spans.set(node.id, { start, end: Math.max(start, endOf(node)) });
  }
  return spans;
}

// The smallest step from WF_STEPS that cuts `span` ms into at most WF_MAX_STEPS intervals (weeks beyond).
function axisStep(span) {
  for (const step of WF_STEPS) if (span / step <= WF_MAX_STEPS) return step;
  let step = WF_STEPS[WF_STEPS.length - 1];
  while (span / step > WF_MAX_STEPS) step *= 2;
  return step;
}

// "12 s", "1.5 min"...: an offset from the run's first moment, in the unit of the axis step.
function fmtOffset(ms, step) {
  const [unit, size] =
    step < 1e3
      ? ['ms', 1]
      : step < 6e4
        ? ['s', 1e3]
        : step < 36e5
          ? ['min', 6e4]
          : step < 864e5
            ? ['h', 36e5]
            : ['d', 864e5];
  return `${Number((ms / size).toFixed(3))} ${unit}`;
}

// Rows (roots in position order, each followed by its children when expanded) with bar positions in percent
// of the axis, which runs from the earliest moment to the next whole step after the latest.
function waterfallLayout(nodes, now, expanded = new Set()) {
  if (!nodes.length) return { t0: now, t1: now, step: 1, ticks: [], rows: [] };
  const spans = nodeSpans(nodes, now);
  const children = childrenByParent(nodes);
  const moments = nodes.map((n) => n.created_at);
  for (const { start, end } of spans.values()) {
    if (start !== null) moments.push(start);
    if (end !== null) moments.push(end);
  }
  let [t0, last] = [Infinity, -Infinity];
  for (const t of moments) [t0, last] = [Math.min(t0, t), Math.max(last, t)]; // no spread: runs can be large
  const span = Math.max(1, last - t0);
  const step = axisStep(span);
  const t1 = t0 + Math.ceil(span / step) * step;
  const pct = (t) => ((t - t0) * 100) / (t1 - t0); // multiply first: whole-number inputs stay exact
  const ticks = [];
  for (let at = t0; at <= t1; at += step) ticks.push({ at, left: pct(at), label: fmtOffset(at - t0, step) });
  const rows = [];
  const visit = (node, depth, seen) => {
    if (seen.has(node.id)) return;
    seen.add(node.id);
    const { start, end } = spans.get(node.id);
    const kids = children.get(node.id) || [];
    const row = {
      id: node.id,
      depth,
      state: shownState(node, kids),
      start,
      end,
      childCount: kids.length,
      childRunId: node.child_run_id || null,
      expanded: kids.length > 0 && expanded.has(node.id),
      left: null,
      width: null,
      marker: null,
    };
    if (start !== null) Object.assign(row, { left: pct(start), width: pct(end) - pct(start) });
    else if (end !== null) row.marker = pct(end);
    rows.push(row);
    if (!row.expanded) return;
    const { shown, hidden } = shownChildren(kids);
    for (const child of shown) visit(child, depth + 1, seen);
    if (hidden.length) {
      const counts = NODE_STATES.map((s) => [s, hidden.filter((n) => n.state === s).length]).filter(
        ([, n]) => n,
      );
      rows.push({ id: null, more: hidden.length, parent: node.id, depth: depth + 1, counts });
    }
  };
  const seen = new Set();
  const ids = new Set(nodes.map((n) => n.id));
  const roots = [...nodes].filter((n) => n.parent === null || n.parent === undefined || !ids.has(n.parent));
  for (const root of roots.sort((a, b) => a.position - b.position)) visit(root, 0, seen);
  return { t0, t1, step, ticks, rows };
}

function tickClass(index, count) {
  return index === 0 ? 'wf-tick first' : index === count - 1 ? 'wf-tick last' : 'wf-tick';
}

// ui: { expanded: Set, selected: id|null, onToggle(id), onSelect(id) }.
function renderWaterfall(nodes, now, ui) {
  const layout = waterfallLayout(nodes, now, ui.expanded);
  if (!layout.rows.length) return h('p', { class: 'empty' }, 'No nodes.');
  const states = NODE_STATES.filter((s) => nodes.some((n) => n.state === s));
  const legend = h(
    'div',
    { class: 'legend', id: 'run-legend' },
    states.map((s) =>
      h(
        'span',
        { class: 'legend-item', 'data-state': s },
        h('span', { class: `swatch bar-${s.toLowerCase()}` }),
        s,
      ),
    ),
  );
  const axis = h(
    'div',
    { class: 'wf-row wf-axis' },
    h('div', { class: 'wf-label muted' }, `from ${fmtTime(layout.t0)}`),
    h(
      'div',
      { class: 'wf-track' },
      layout.ticks.map((t, i) =>
        h(
          'span',
          {
            class: tickClass(i, layout.ticks.length),
            style: `left:${t.left}%`,
            title: fmtTime(t.at),
            'data-at': t.at,
          },
          t.label,
        ),
      ),
    ),
  );
  const grid = h(
    'div',
    { class: 'wf-grid', 'aria-hidden': 'true' },
    layout.ticks.map((t) => h('span', { class: 'wf-line', style: `left:${t.left}%` })),
  );
  return h(
    'div',
    null,
    legend,
    h(
      'div',
      { class: 'wf', id: 'run-waterfall' },
      grid,
      axis,
      layout.rows.map((row) => waterfallRow(row, ui)),
    ),
  );
}

function waterfallRow(row, ui) {
  if (row.more) {
    return h(
      'div',
      { class: 'wf-row wf-more', 'data-more': row.parent, 'data-depth': row.depth },
      h(
        'div',
        { class: 'wf-label muted', style: `padding-left:${row.depth * 14 + 24}px` },
        `+${row.more} more`,
      ),
      h('div', { class: 'wf-more-counts muted' }, row.counts.map(([s, n]) => `${s} ${n}`).join(' / ')),
    );
  }
  const toggle = row.childCount
    ? h(
        'button',
        {
          type: 'button',
          class: 'wf-toggle',
          'aria-expanded': String(row.expanded),
          'aria-label': `${row.expanded ? 'Collapse' : 'Expand'} ${row.childCount} children of ${row.id}`,
          onclick: (event) => {
            event.stopPropagation();
            ui.onToggle(row.id);
          },
        },
        row.expanded ? '\u25BE' : '\u25B8',
      )
    : h('span', { class: 'wf-toggle-space' });
  const duration = row.start !== null ? fmtDuration(row.end - row.start) : row.state.toLowerCase();
  const label = h(
    'div',
    { class: 'wf-label', style: `padding-left:${row.depth * 14}px` },
    toggle,
    h('button', { type: 'button', class: 'link wf-name', onclick: () => ui.onSelect(row.id) }, row.id),
    row.childCount ? h('span', { class: 'muted' }, ` (${row.childCount})`) : null,
    row.childRunId ? h('span', { class: 'wf-sub' }, runLink(row.childRunId, 'run \u2197')) : null,
    h('span', { class: 'wf-dur muted' }, duration),
  );
  const title =
    `${row.id}: ${row.state}` +
    (row.start !== null
      ? `, ${fmtDuration(row.end - row.start)} (${fmtTime(row.start)} \u2192 ${fmtTime(row.end)})`
      : '');
  const mark =
    row.start !== null
      ? h('span', {
          class: `wf-bar bar-${row.state.toLowerCase()}`,
          style: `left:${row.left}%;width:${row.width}%`,
          title,
        })
      : row.marker !== null
        ? h('span', {
            class: `wf-marker bar-${row.state.toLowerCase()}`,
            style: `left:${row.marker}%`,
            title,
          })
        : h('span', { class: 'wf-none muted' }, `${row.state.toLowerCase()}: not started`);
  // The name is the keyboard way in; a click on the bar's track selects too.
  return h(
    'div',
    {
      class: `wf-row${ui.selected === row.id ? ' selected' : ''}`,
      'data-node': row.id,
      'data-depth': row.depth,
    },
    label,
    h('div', { class: 'wf-track', onclick: () => ui.onSelect(row.id) }, mark),
  );
}
