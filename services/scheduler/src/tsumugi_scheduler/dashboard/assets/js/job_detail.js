// The job detail (GET /api/jobs/{id}), its "why is it not running" explanation and the New job form.

function openJob(id) {
  return openModal(`#/jobs/${enc(id)}`, () => loadJobDetail(id));
}

async function loadJobDetail(id) {
  let job;
  try {
    job = (await apiCall(API.job(id))).job;
  } catch (error) {
    if (app.modal && app.modal.route === `#/jobs/${enc(id)}`) {
      modalContent(h('h2', null, id), h('p', { class: 'error-text' }, `Failed to load: ${error.message}`));
    }
    return;
  }
  if (!app.modal || app.modal.route !== `#/jobs/${enc(id)}`) return; // closed or replaced meanwhile
  const explain = h('div', { id: 'job-explain' });
  modalContent(renderJobDetail(job, explain));
  // Only a job that is waiting has something to explain (beyond-the-original C4).
  if (job.state === 'SCHEDULED' || job.state === 'QUEUED') loadExplain(job.id, explain);
}

function renderJobDetail(job, explain) {
  const gone = app.jobs.gone.has(job.id);
  const after = () => { refreshModal(); refreshNow(); };
  return h('div', { id: 'job-detail' },
    h('h2', null, 'Job ', stateBadge(job.state), ' ',
      isCancelRequested(job) ? h('span', { class: 'badge cancel-requested' }, 'cancel requested') : null),
    fieldList(jobFields(job)),
    h('div', { class: 'actions' }, jobActions(job, gone, after),
      job.state === 'SCHEDULED' && !isCancelRequested(job) ? rescheduleForm(job.id, after) : null),
    explain,
    h('h3', null, 'Payload'), h('pre', { id: 'job-payload' }, prettyJson(job.payload)),
    job.result !== null && job.result !== undefined ? [h('h3', null, 'Result'), h('pre', null, prettyJson(job.result))] : null,
    renderAttempts(job.attempts_log || []));
}

function jobFields(job) {
  const pairs = [['ID', job.id], ['Binding', job.binding], ['Attempts', `${job.attempts} / ${job.max_attempts}`]];
  if (job.progress !== null && job.progress !== undefined) {
    const percent = Math.round(job.progress * 100);
    pairs.push(['Progress', h('span', null, h('span', { class: 'progress' }, h('span', { style: `width:${percent}%` })), ` ${percent}%`)]);
  }
  pairs.push(['Guarantee', job.guarantee], ['Priority', String(job.priority)],
    ['Concurrency key', job.concurrency_key || '\u2014'], ['Unique key', job.unique_key || '\u2014'],
    ['Created at', fmtTime(job.created_at)], ['Run after', fmtTime(job.run_after)],
    ['Started at', fmtTime(job.dispatched_at)], ['Updated at', fmtTime(job.updated_at)]);
  if (job.expires_at) pairs.push(['Expires at', fmtTime(job.expires_at)]);
  if (job.run_id) {
    pairs.push(['Run', h('button', { type: 'button', class: 'link', onclick: () => openRun(job.run_id) },
      job.node_id ? `${job.run_id} (node ${job.node_id})` : job.run_id)]);
  }
  if (job.traceparent) pairs.push(['Trace', job.traceparent]);
  return pairs;
}

// Attempts oldest first (the API sends newest first).
function renderAttempts(log) {
  if (!log.length) return null;
  const rows = [...log].reverse().map((a) => h('tr', { class: 'attempt-row' },
    h('td', null, `#${a.attempt}`), h('td', null, stateBadge(a.state)), h('td', null, fmtTime(a.started_at)),
    h('td', null, fmtTime(a.finished_at)),
    h('td', { class: 'num' }, fmtDuration(a.started_at ? a.finished_at - a.started_at : null)),
    h('td', null, a.error ? h('pre', null, a.error) : '\u2014')));
  return [h('h3', null, 'Attempts'), h('table', { id: 'attempts-log' },
    h('thead', null, h('tr', null, ['#', 'Status', 'Started at', 'Finished at', 'Processing time', 'Error'].map((t) => h('th', null, t)))),
    h('tbody', null, rows))];
}

function rescheduleForm(id, after) {
  const delay = h('input', { type: 'number', min: '0', step: '1', value: '0', 'aria-label': 'Delay in seconds', style: 'width:7em' });
  return h('span', null, 'Run in ', delay, ' s ', h('button', { type: 'button', onclick: () => {
    const seconds = Number(delay.value);
    if (!Number.isFinite(seconds) || seconds < 0) { setStatus('Delay must be a number of seconds, at least 0', true); return; }
    mutateJob(id, 'reschedule', after, { delayMs: Math.round(seconds * 1000) });
  } }, 'Reschedule'));
}

async function loadExplain(id, target) {
  let answer;
  try {
    answer = await apiCall(API.jobExplain(id));
  } catch (error) {
    // 404/501: the server cannot explain (older scheduler); the section stays hidden.
    if (error.status !== 404 && error.status !== 501) replace(target, h('p', { class: 'error-text' }, `Explain failed: ${error.message}`));
    return;
  }
  replace(target, h('h3', null, 'Why is it not running?'), renderExplanation(answer));
}

// The explain answer ({"explain": {summary, blockers: [...]}}) lists what holds the job, and when it clears.
function renderExplanation(wrapped) {
  const answer = wrapped && wrapped.explain && !Array.isArray(wrapped.explain) ? wrapped.explain : wrapped;
  const items = Array.isArray(answer) ? answer : answer && (answer.blockers || answer.reasons);
  if (!Array.isArray(items)) return h('pre', null, prettyJson(answer));
  const summary = answer && (answer.summary || answer.message);
  if (!items.length) return h('p', null, summary || 'Nothing holds it back: it goes with the next dispatch.');
  return h('div', null, summary ? h('p', null, summary) : null,
    h('ul', { class: 'explain' }, items.map((item) => h('li', null, describeBlocker(item)))));
}

function describeBlocker(item) {
  if (typeof item !== 'object' || item === null) return String(item);
  const kind = item.kind || item.reason || item.code || 'blocked';
  const text = item.message || item.detail || '';
  const until = item.clears_at ?? item.until ?? null;
  const holders = Array.isArray(item.holders) ? item.holders : [];
  return [h('strong', null, kind), text ? `: ${text}` : '', until ? ` (clears ${fmtTime(until)})` : '',
    holders.length ? [' held by ', holders.map((id) => [h('button', { type: 'button', class: 'link',
      onclick: () => openJob(id) }, id), ' '])] : null];
}

function openNewJob(bindings) {
  const form = h('form', { class: 'grid', id: 'new-job' },
    'Binding', h('select', { name: 'binding', required: true }, bindings.map((b, i) => option(b, b, i === 0))),
    'Payload (JSON)', h('textarea', { name: 'payload' }, '{}'),
    'Max attempts', h('input', { name: 'maxAttempts', type: 'number', min: '1', placeholder: '3' }),
    'Delay (ms)', h('input', { name: 'delayMs', type: 'number', min: '0' }),
    'Priority', h('input', { name: 'priority', type: 'number' }),
    'Unique key', h('input', { name: 'uniqueKey' }),
    'Concurrency key', h('input', { name: 'concurrencyKey' }),
    h('span'), h('button', { type: 'submit', class: 'primary' }, 'Create'));
  const error = h('p', { class: 'error-text' });
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
