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

function openNewJob(bindings, notices = []) {
  const chosen = defaultBinding(bindings, notices);
  const payload = h('textarea', { name: 'payload', 'aria-label': 'Payload (JSON)' }, examplePayload(chosen));
  let edited = false;
  payload.addEventListener('input', () => { edited = true; });
  const binding = h('select', { name: 'binding', required: true, 'aria-label': 'Binding',
    onchange: (e) => { if (!edited) payload.value = examplePayload(e.target.value); } },
  bindings.map((b) => option(b, notices.includes(b) ? `${b} (notice)` : b, b === chosen)));
  const form = h('form', { class: 'grid', id: 'new-job' },
    'Binding', binding,
    'Payload (JSON)', payload,
    'Max attempts', h('input', { name: 'maxAttempts', type: 'number', min: '1', placeholder: '3' }),
    'Delay (ms)', h('input', { name: 'delayMs', type: 'number', min: '0' }),
    'Priority', h('input', { name: 'priority', type: 'number' }),
    'Unique key', h('input', { name: 'uniqueKey' }),
    'Concurrency key', h('input', { name: 'concurrencyKey' }),
    h('span'), h('button', { type: 'submit', class: 'primary', 'data-needs': 'operator' }, 'Create'));
  const error = h('p', { class: 'error-text', id: 'new-job-error' });
  form.addEventListener('submit', (event) => { event.preventDefault(); submitNewJob(form, error); });
  openModal(`#/${app.tab}`, null);
  modalContent(h('h2', null, 'New job'), form, error);
}

async function submitNewJob(form, error) {
  const data = new FormData(form);
  const body = { binding: data.get('binding') };
  try {
    body.payload = JSON.parse(String(data.get('payload') || 'null'));
  } catch {
    error.textContent = 'Payload must be valid JSON';
    return;
  }
  for (const key of ['maxAttempts', 'delayMs', 'priority']) if (data.get(key) !== '') body[key] = Number(data.get(key));
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
