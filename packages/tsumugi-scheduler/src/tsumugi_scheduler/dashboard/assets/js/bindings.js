/* global $, API, apiCall, app, confirmAction, durationWords, fieldList, fmtDuration, h, option, plural,
   refreshNow, replace, setStatus */
/* exported loadBindings */

// The bindings tab (docs/reference/additions.md A9/A10): one compact card per binding, from GET
// /api/diagnostics: in flight against concurrency as a gauge, rate limits, paused or running, what holds it
// back in words, the settings in force; per-shard detail and the policy editor folded away. Applying a policy
// pins the settings until reset (ADR-0058).

// Request keys are the policy body's (api/bodies.py POLICY_FIELDS): snake_case, rates {tokens, interval_ms}.
/** @type {Array<[string, string, number]>} */
const POLICY_NUMBERS = [
  ['concurrency', 'Concurrency', 0],
  ['per_key_concurrency', 'Per-key concurrency', 1],
  ['reaper_grace_ms', 'Reaper grace (ms)', 0],
  ['sweep_after_ms', 'Sweep after (ms)', 0],
  ['failed_retention_ms', 'Failed retention (ms)', 0],
];
const POLICY_RATES = [
  ['rate', 'Rate'],
  ['per_key_rate', 'Per-key rate'],
];
const HELD_WORDS = {
  paused: (n) => `Paused: ${plural(n, 'waiting job')} will not start until dispatch is resumed.`,
  capacity: (n, s) => `At capacity: ${waitFor(n)} one of the ${s.concurrency} slots.`,
  rate: (n, s) => `Rate limit: ${waitFor(n)} a token (${fmtRate(s.rate)}).`,
  per_key_concurrency: (n, s) =>
    `Per-key concurrency: ${waitFor(n)} their key (at most ${s.per_key_concurrency} per key).`,
  per_key_rate: (n, s) => `Per-key rate: ${waitFor(n)} their key's token (${fmtRate(s.per_key_rate)}).`,
};

function waitFor(n) {
  return `${plural(n, 'ready job')} ${n === 1 ? 'waits' : 'wait'} for`;
}

async function loadBindings(isCurrent) {
  const [bindings, diagnostics] = await Promise.all([
    apiCall(API.bindings),
    apiCall(API.diagnostics).catch((error) => ({ error: error.message })),
  ]);
  if (!isCurrent()) return;
  const names = bindings.bindings || [];
  const notices = bindings.notices || [];
  const perBinding = (diagnostics && diagnostics.bindings) || {};
  // Keep open folds and typed policy values across the auto-refresh: a card being edited is not redrawn.
  const editing = [...document.querySelectorAll('.binding-card details[open]')].map(
    (d) => /** @type {HTMLElement} */ (d).dataset.fold,
  );
  if (document.querySelector('form.policy[data-dirty]')) return; // a policy being edited: redraw after Apply
  replace(
    $('#view'),
    diagnostics.error ? h('p', { class: 'error-text' }, `Diagnostics: ${diagnostics.error}`) : null,
    names.length
      ? h(
          'div',
          { class: 'cards' },
          names.map((name) => renderBindingCard(name, perBinding[name], notices.includes(name), editing)),
        )
      : h('p', { class: 'empty' }, 'No bindings.'),
  );
}

function fmtRate(rate) {
  return rate ? `${rate.tokens} per ${durationWords(rate.interval_ms)}` : 'unlimited';
}

// Figures over every shard: counts add up, settings are shard 0's (a policy change applies to all shards).
function bindingSummary(diagnostics) {
  const shards = diagnostics.shards || [];
  const sum = (f) => shards.reduce((total, s) => total + f(s), 0);
  const count = (state) => sum((s) => (s.counts && s.counts[state]) || 0);
  const settings = (shards[0] && shards[0].settings) || {};
  const blocked = {};
  for (const axis of Object.keys(HELD_WORDS)) blocked[axis] = sum((s) => (s.blocked && s.blocked[axis]) || 0);
  return {
    shards,
    settings,
    blocked,
    inFlight: count('QUEUED') + count('RUNNING'),
    waiting: count('SCHEDULED'),
    capacity: sum((s) => (s.settings && s.settings.concurrency) || 0),
    failed: count('FAILED') + count('STALLED'),
    outbox: sum((s) => s.outbox || 0),
    paused: shards.some((s) => s.settings && s.settings.paused),
  };
}

function renderBindingCard(name, diagnostics, isNotice, openFolds) {
  const fold = (key, summary, body) =>
    h(
      'details',
      { 'data-fold': key, open: openFolds.includes(key) || undefined },
      h('summary', null, summary),
      body,
    );
  if (!diagnostics) {
    return h(
      'section',
      { class: 'card binding binding-card', 'data-binding': name },
      h('h3', null, name),
      h('p', { class: 'empty' }, 'No diagnostics.'),
      fold(`${name}:policy`, 'Edit policy', policyForm(name, {})),
    );
  }
  const sum = bindingSummary(diagnostics);
  const held = diagnostics.held_back_by || [];
  const s = sum.settings;
  return h(
    'section',
    { class: `card binding binding-card${sum.paused ? ' is-paused' : ''}`, 'data-binding': name },
    h(
      'div',
      { class: 'card-head' },
      h('h3', null, name),
      // "running" only while jobs are in flight; a binding with nothing to do is idle (issue 26).
      sum.paused
        ? h('span', { class: 'badge st-paused' }, 'paused')
        : sum.inFlight
          ? h('span', { class: 'badge st-completed' }, 'running')
          : h('span', { class: 'badge idle' }, 'idle'),
      isNotice
        ? h(
            'span',
            {
              class: 'badge st-cancelled',
              title: 'Receives the scheduler\u2019s failure or settled notices',
            },
            'notices',
          )
        : null,
      diagnostics.pinned
        ? h(
            'span',
            { class: 'badge pinned', title: "Runtime policy: the code's settings do not apply until reset" },
            'runtime policy',
          )
        : null,
    ),
    gauge(sum.inFlight, sum.capacity),
    h(
      'p',
      { class: 'figures' },
      `${plural(sum.waiting, 'job')} scheduled`,
      ' \u00b7 ',
      `${sum.failed} failed or stalled`,
      sum.outbox ? ` \u00b7 ${sum.outbox} changes to project` : null,
    ),
    h(
      'ul',
      { class: 'held' },
      held.length
        ? held.map((axis) =>
            h(
              'li',
              { class: 'held-item', 'data-axis': axis },
              (HELD_WORDS[axis] || ((n) => `${axis}: ${n}`))(sum.blocked[axis], s),
            ),
          )
        : h('li', { class: 'muted' }, 'Nothing holds it back.'),
    ),
    h(
      'p',
      { class: 'settings-line' },
      `Rate ${fmtRate(s.rate)} \u00b7 per key ${s.per_key_concurrency} at a time`,
      s.per_key_rate ? `, ${fmtRate(s.per_key_rate)}` : '',
    ),
    h(
      'div',
      { class: 'folds' },
      fold(`${name}:details`, `Settings and ${plural(sum.shards.length, 'shard')}`, [
        settingsList(s),
        shardTable(sum.shards),
      ]),
      fold(`${name}:policy`, 'Edit policy', policyForm(name, s)),
    ),
  );
}

function settingsList(s) {
  return fieldList([
    ['Concurrency', String(s.concurrency)],
    ['Rate', fmtRate(s.rate)],
    [
      'Per key',
      `${s.per_key_concurrency} at a time, ${s.per_key_rate ? fmtRate(s.per_key_rate) : 'no rate limit'}`,
    ],
    ['Reaper grace', fmtDuration(s.reaper_grace_ms)],
    ['Aging', s.aging_interval_ms ? `every ${durationWords(s.aging_interval_ms)}` : '\u2014'],
    ['Keep finished', fmtDuration(s.sweep_after_ms)],
    ['Keep failed', fmtDuration(s.failed_retention_ms)],
  ]);
}

function gauge(inFlight, capacity) {
  const share = capacity ? Math.min(1, inFlight / capacity) : inFlight ? 1 : 0;
  const level = share >= 1 ? 'full' : share >= 0.8 ? 'high' : 'ok';
  return h(
    'div',
    { class: 'gauge-row' },
    h('span', { class: 'muted' }, 'In flight'),
    h(
      'span',
      {
        class: `gauge ${level}`,
        role: 'meter',
        'aria-valuemin': '0',
        'aria-valuemax': String(capacity),
        'aria-valuenow': String(inFlight),
        'aria-label': 'In flight against concurrency',
      },
      h('span', { style: `width:${(100 * share).toFixed(1)}%` }),
    ),
    h('strong', { class: 'gauge-text' }, `${inFlight} / ${capacity}`),
  );
}

function shardTable(shards) {
  const head = ['Shard', 'Scheduled', 'Queued', 'Running', 'Failed', 'Outbox', 'Notices', 'Held back'];
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'shards' },
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
        shards.map((s) =>
          h(
            'tr',
            null,
            h('td', null, `#${s.shard}`),
            ['SCHEDULED', 'QUEUED', 'RUNNING', 'FAILED'].map((state) =>
              h('td', { class: 'num' }, (s.counts && s.counts[state]) || 0),
            ),
            h('td', { class: 'num' }, s.outbox),
            h('td', { class: 'num' }, s.notices_pending),
            h(
              'td',
              null,
              (s.held_back_by || [])
                .map((axis) => `${axis.replace(/_/g, ' ')} (${s.blocked[axis]})`)
                .join(', ') || '\u2014',
            ),
          ),
        ),
      ),
    ),
  );
}

// A milliseconds input with its value in words beside it ("604800000" reads "ms = 7 d"), kept current as it is
// typed (issue 26: raw milliseconds in the policy form).
function msInWords(input) {
  const words = h('span', { class: 'muted small ms-words' });
  const show = () => {
    const ms = Number(input.value);
    words.textContent = input.value !== '' && ms >= 0 ? ` ms = ${fmtDuration(ms)}` : ' ms';
  };
  input.addEventListener('input', show);
  show();
  return h('span', { class: 'ms-input' }, input, words);
}

// The form starts from the settings in force; only the fields the user changed are sent.
function policyForm(binding, current) {
  const result = h('p', { class: 'policy-result', role: 'status' });
  const last = app.policyResults && app.policyResults[binding];
  if (last) showResult(result, last.text, last.isError);
  const paused = h(
    'select',
    { name: 'paused', 'aria-label': 'Dispatch' },
    option('false', 'running', current.paused === false),
    option('true', 'paused', current.paused === true),
  );
  const number = (key, label, min) => {
    const input = h('input', {
      name: key,
      type: 'number',
      min: String(min),
      step: '1',
      value: current[key] ?? '',
      'aria-label': label,
    });
    return key.endsWith('_ms') ? msInWords(input) : input;
  };
  const rate = (key, label) => {
    const value = current[key];
    return h(
      'span',
      { class: 'rate-inputs' },
      h('input', {
        name: `${key}.tokens`,
        type: 'number',
        min: '1',
        step: '1',
        placeholder: 'tokens',
        value: value ? value.tokens : '',
        'aria-label': `${label} tokens`,
      }),
      ' per ',
      msInWords(
        h('input', {
          name: `${key}.interval_ms`,
          type: 'number',
          min: '1',
          step: '1',
          placeholder: 'ms',
          value: value ? value.interval_ms : '',
          'aria-label': `${label} interval (ms)`,
        }),
      ),
    );
  };
  const form = h(
    'form',
    { class: 'grid policy', novalidate: true },
    'Dispatch',
    paused,
    POLICY_NUMBERS.map(([key, label, min]) => [h('label', null, label), number(key, label, min)]),
    POLICY_RATES.map(([key, label]) => [
      h('label', null, label, h('span', { class: 'muted small' }, ' (empty: unlimited)')),
      rate(key, label),
    ]),
    h('span'),
    h(
      'span',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', 'data-needs': 'admin' }, 'Apply'),
      h(
        'button',
        { type: 'button', 'data-needs': 'admin', onclick: () => resetPolicy(binding, result) },
        'Reset to code settings',
      ),
    ),
  );
  form.addEventListener('input', () => {
    form.dataset.dirty = '1';
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    applyPolicy(binding, form, current, result);
  });
  return h('div', null, form, result);
}

// The changed fields, or {error} naming the first field that breaks its rule (the server checks again).
function policyPatch(form, current) {
  const data = new FormData(form);
  const patch = {};
  if (String(data.get('paused')) !== String(current.paused)) patch.paused = data.get('paused') === 'true';
  for (const [key, , min] of POLICY_NUMBERS) {
    const text = String(data.get(key)).trim();
    if (text === '' || Number(text) === current[key]) continue;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min)
      return { error: `${key} must be a whole number, at least ${min}` };
    patch[key] = value;
  }
  for (const [key] of POLICY_RATES) {
    const tokens = String(data.get(`${key}.tokens`)).trim();
    const interval = String(data.get(`${key}.interval_ms`)).trim();
    const was = current[key] || null;
    if (tokens === '' && interval === '') {
      if (was) patch[key] = null;
      continue;
    }
    if (tokens === '' || interval === '')
      return { error: `${key} needs both tokens and interval_ms (or neither, for unlimited)` };
    const value = { tokens: Number(tokens), interval_ms: Number(interval) };
    for (const [part, n] of Object.entries(value))
      if (!Number.isInteger(n) || n < 1)
        return { error: `${key}.${part} must be a whole number, at least 1` };
    if (!was || was.tokens !== value.tokens || was.interval_ms !== value.interval_ms) patch[key] = value;
  }
  return { patch };
}

function showResult(result, text, isError, binding) {
  if (binding) app.policyResults = Object.assign(app.policyResults || {}, { [binding]: { text, isError } });
  result.textContent = text;
  result.className = `policy-result ${isError ? 'error-text' : 'ok-text'}`;
}

async function applyPolicy(binding, form, current, result) {
  const { patch, error } = policyPatch(form, current);
  if (error) {
    showResult(result, error, true, binding);
    return;
  }
  if (!Object.keys(patch).length) {
    showResult(result, 'Nothing changed: edit a field first.', true, binding);
    return;
  }
  await sendPolicy(API.policy(binding), patch, binding, result);
}

async function resetPolicy(binding, result) {
  if (
    !(await confirmAction({
      title: `Reset ${binding}?`,
      message: `Drop the runtime policy of ${binding} and return to the code's settings.`,
      confirmLabel: 'Reset policy',
    }))
  )
    return;
  await sendPolicy(API.policyReset(binding), undefined, binding, result);
}

async function sendPolicy(path, body, binding, result) {
  try {
    const answer = await apiCall(path, { method: 'POST', body });
    const shards = (answer && answer.shards) || [];
    const pinned = shards.some((s) => s.pinned);
    const changed = body
      ? Object.keys(body)
          .map(
            (k) =>
              `${k} = ${body[k] === null ? 'unlimited' : typeof body[k] === 'object' ? fmtRate(body[k]) : body[k]}`,
          )
          .join(', ')
      : null;
    showResult(
      result,
      body
        ? `Applied to ${plural(shards.length, 'shard')}: ${changed}. ${pinned ? 'Pinned until reset.' : ''}`
        : `Back to the code's settings on ${plural(shards.length, 'shard')}.`,
      false,
      binding,
    );
    setStatus(body ? `Policy applied to ${binding}` : `Policy of ${binding} reset to the code's settings`);
  } catch (error) {
    showResult(result, `Refused: ${error.message}`, true, binding); // the server names the field and the rule
    return; // the typed values stay for correction
  }
  const form = result.previousElementSibling;
  if (form) delete form.dataset.dirty;
  refreshNow();
}
