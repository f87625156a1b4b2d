// The bindings tab (beyond-the-original A9/A10): what holds each binding back right now (diagnostics) and a
// form that changes the policy at run time (pinning the settings until reset, ADR-0058), or resets to the code's.

// Request keys are the policy body's (api/bodies.py POLICY_FIELDS): snake_case, rates {tokens, interval_ms}.
const POLICY_NUMBERS = [
  ['concurrency', 'Concurrency', 1], ['per_key_concurrency', 'Per-key concurrency', 1],
  ['reaper_grace_ms', 'Reaper grace (ms)', 0], ['sweep_after_ms', 'Sweep after (ms)', 0],
  ['failed_retention_ms', 'Failed retention (ms)', 0],
];
const POLICY_RATES = [['rate', 'Rate'], ['per_key_rate', 'Per-key rate']];

async function loadBindings(isCurrent) {
  const [bindings, diagnostics] = await Promise.all([
    apiCall(API.bindings),
    apiCall(API.diagnostics).catch((error) => ({ error: error.message })),
  ]);
  if (!isCurrent()) return;
  const names = bindings.bindings || [];
  const perBinding = (diagnostics && diagnostics.bindings) || {};
  replace($('#view'), diagnostics.error ? h('p', { class: 'error-text' }, `Diagnostics: ${diagnostics.error}`) : null,
    names.length ? names.map((name) => renderBindingCard(name, perBinding[name])) : h('p', { class: 'empty' }, 'No bindings.'));
}

// A pinned binding runs on settings changed at run time; the code's settings do not apply until reset (ADR-0058).
function renderBindingCard(name, diagnostics) {
  const held = (diagnostics && diagnostics.held_back_by) || [];
  const pinned = Boolean(diagnostics && diagnostics.pinned);
  return h('section', { class: 'card binding', 'data-binding': name }, h('h3', null, name, ' ',
    pinned ? h('span', { class: 'badge pinned', title: "Runtime policy: the code's settings do not apply until reset" }, 'runtime policy') : null,
    held.map((axis) => h('span', { class: 'badge st-failed', title: 'Holds ready jobs back now' }, axis))),
    diagnostics === undefined ? h('p', { class: 'empty' }, 'No diagnostics.') : renderDiagnostics(diagnostics),
    h('details', null, h('summary', null, 'Policy'), policyForm(name)));
}

// Diagnostics shapes differ by server version (per shard, booleans or counts): show them as nested fields.
function renderDiagnostics(value) {
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value) && value.every((item) => item === null || typeof item !== 'object')) return value.join(', ') || '\u2014';
  if (Array.isArray(value)) return h('div', null, value.map((item) => h('div', { class: 'card' }, renderDiagnostics(item))));
  return fieldList(Object.entries(value).map(([key, inner]) => [key, renderDiagnostics(inner)]));
}

function policyForm(binding) {
  const result = h('pre', { hidden: true });
  const paused = h('select', { name: 'paused' }, option('', 'unchanged'), option('true', 'paused'), option('false', 'running'));
  const form = h('form', { class: 'grid policy' },
    'Paused', paused,
    POLICY_NUMBERS.map(([key, label, min]) => [label, h('input', { name: key, type: 'number', min: String(min), placeholder: 'unchanged' })]),
    POLICY_RATES.map(([key, label]) => [label, h('span', null,
      h('input', { name: `${key}.tokens`, type: 'number', min: '1', placeholder: 'tokens', style: 'width:7em' }), ' per ',
      h('input', { name: `${key}.interval_ms`, type: 'number', min: '1', placeholder: 'ms', style: 'width:7em' }), ' ',
      h('label', null, h('input', { type: 'checkbox', name: `${key}.unlimited` }), ' unlimited'))]),
    h('span'), h('span', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Apply'),
      h('button', { type: 'button', onclick: () => resetPolicy(binding, result) }, 'Reset to code settings')));
  form.addEventListener('submit', (event) => { event.preventDefault(); applyPolicy(binding, form, result); });
  return h('div', null, form, result);
}

// Only the fields the user filled in are sent: the rest keep their current (pinned or code) value.
function policyPatch(form) {
  const data = new FormData(form);
  const patch = {};
  if (data.get('paused')) patch.paused = data.get('paused') === 'true';
  for (const [key] of POLICY_NUMBERS) if (data.get(key) !== '') patch[key] = Number(data.get(key));
  for (const [key] of POLICY_RATES) {
    const tokens = data.get(`${key}.tokens`);
    const interval = data.get(`${key}.interval_ms`);
    if (data.get(`${key}.unlimited`)) patch[key] = null;
    else if (tokens !== '' || interval !== '') patch[key] = { tokens: Number(tokens), interval_ms: Number(interval) };
  }
  return patch;
}

async function applyPolicy(binding, form, result) {
  const patch = policyPatch(form);
  if (!Object.keys(patch).length) { setStatus('Nothing to apply: fill in at least one field', true); return; }
  await sendPolicy(API.policy(binding), patch, `Policy applied to ${binding}`, result);
}

async function resetPolicy(binding, result) {
  if (!window.confirm(`Drop the runtime policy of ${binding} and return to the code's settings?`)) return;
  await sendPolicy(API.policyReset(binding), undefined, `Policy of ${binding} reset to the code's settings`, result);
}

async function sendPolicy(path, body, message, result) {
  try {
    const answer = await apiCall(path, { method: 'POST', body });
    setStatus(message);
    result.hidden = false;
    result.textContent = prettyJson(answer); // the effective settings, as the server answers them
  } catch (error) {
    setStatus(`Policy refused: ${error.message}`, true); // names the field and the rule
  }
}
