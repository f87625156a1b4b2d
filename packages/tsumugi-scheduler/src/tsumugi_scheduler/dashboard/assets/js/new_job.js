/* global API, apiCall, app, closeModal, h, modalContent, openModal, option, prettyJson, refreshNow, setStatus
 */
/* exported openNewJob */

// The New job form. It starts on a harmless binding: Hello when there is one (the examples' greeter), else
// the first binding that is not a notice receiver; a payload example is filled in for the bindings we know.

const EXAMPLE_PAYLOADS = { Hello: { name: 'world' } };

function defaultBinding(bindings, notices) {
  if (bindings.includes('Hello')) return 'Hello';
  return bindings.find((b) => !notices.includes(b)) || bindings[0] || '';
}

function examplePayload(binding) {
  return JSON.stringify(EXAMPLE_PAYLOADS[binding] || {}, null, 2);
}

// `from` (a finished job's binding and payload) pre-fills the form to run that job again, edited.
function openNewJob(bindings, notices = [], from = null) {
  const chosen = from && bindings.includes(from.binding) ? from.binding : defaultBinding(bindings, notices);
  const payload = h(
    'textarea',
    { name: 'payload', 'aria-label': 'Payload (JSON)' },
    from ? prettyJson(from.payload) : examplePayload(chosen),
  );
  let edited = Boolean(from);
  payload.addEventListener('input', () => {
    edited = true;
  });
  const binding = h(
    'select',
    {
      name: 'binding',
      required: true,
      'aria-label': 'Binding',
      onchange: (e) => {
        if (!edited) payload.value = examplePayload(e.target.value);
      },
    },
    bindings.map((b) => option(b, notices.includes(b) ? `${b} (notice)` : b, b === chosen)),
  );
  const form = h(
    'form',
    { class: 'grid', id: 'new-job' },
    'Binding',
    binding,
    'Payload (JSON)',
    payload,
    'Max attempts',
    h('input', { name: 'maxAttempts', type: 'number', min: '1', placeholder: '3' }),
    'Delay (ms)',
    h('input', { name: 'delayMs', type: 'number', min: '0' }),
    'Priority',
    h('input', { name: 'priority', type: 'number' }),
    'Unique key',
    h('input', { name: 'uniqueKey' }),
    'Concurrency key',
    h('input', { name: 'concurrencyKey' }),
    h('span'),
    h('button', { type: 'submit', class: 'primary', 'data-needs': 'operator' }, 'Create'),
  );
  const error = h('p', { class: 'error-text', id: 'new-job-error' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submitNewJob(form, error);
  });
  openModal(`#/${app.tab}`, null);
  modalContent(h('h2', null, from ? `Run ${from.binding} again` : 'New job'), form, error);
}

// Where JSON.parse stopped, as ": line 2, column 15 (Expected ...)"; the browser gives an offset ("at
// position 14"), or nothing at all for text that ends too early (then the end of the text is the place).
function jsonErrorPlace(text, error) {
  const found = /position (\d+)/.exec(error.message);
  const offset = found ? Number(found[1]) : text.length;
  const before = text.slice(0, offset).split('\n');
  const reason = error.message.replace(/\s*(in JSON )?at position \d+.*$/, '').replace(/^JSON\.parse: /, '');
  return `: line ${before.length}, column ${before[before.length - 1].length + 1} (${reason})`;
}

async function submitNewJob(form, error) {
  const data = new FormData(form);
  const body = { binding: data.get('binding') };
  const text = String(data.get('payload') || 'null');
  try {
    body.payload = JSON.parse(text);
  } catch (e) {
    error.textContent = `Payload must be valid JSON${jsonErrorPlace(text, e)}`;
    return;
  }
  for (const key of ['maxAttempts', 'delayMs', 'priority'])
    if (data.get(key) !== '') body[key] = Number(data.get(key));
  for (const key of ['uniqueKey', 'concurrencyKey']) if (data.get(key)) body[key] = String(data.get(key));
  try {
    const answer = await apiCall(API.jobs, { method: 'POST', body });
    closeModal();
    setStatus(`Job created: ${answer.id}`);
    refreshNow();
  } catch (e) {
    error.textContent = e.message; // server validation errors verbatim
  }
}
