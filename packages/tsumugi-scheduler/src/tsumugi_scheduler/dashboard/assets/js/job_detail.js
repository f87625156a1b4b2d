/* global ACTIVE_STATES, API, apiCall, app, currentAttempt, enc, fieldList, fmtDuration, h, isCancelRequested,
   jobActions, loadExplain, modalContent, mutateJob, openModal, openNewJob, openRun, prettyJson, refreshModal,
   refreshNow, renderSteps, setStatus, stateBadge, timeEl */
/* exported openJob */

// The job detail (GET /api/jobs/{id}): state, fields with relative and absolute times, actions, the
// "why is it not running" explanation (explain.js), payload, result and the attempt timeline.

function openJob(id) {
  return openModal(`#/jobs/${enc(id)}`, () => loadJobDetail(id));
}

async function loadJobDetail(id) {
  const route = `#/jobs/${enc(id)}`;
  let job;
  let actions;
  try {
    ({ job, actions } = await apiCall(API.job(id)));
  } catch (error) {
    if (app.modal && app.modal.route === route) {
      modalContent(h('h2', null, id), h('p', { class: 'error-text' }, `Failed to load: ${error.message}`));
    }
    return;
  }
  if (!app.modal || app.modal.route !== route) return; // closed or replaced meanwhile
  const waiting = job.state === 'SCHEDULED' || job.state === 'QUEUED' || job.state === 'SLEEPING';
  // The last explanation shows at once on a refresh (no flicker) and is replaced when the new one arrives.
  const explain = h(
    'div',
    { id: 'job-explain' },
    waiting && app.explained && app.explained.id === id ? app.explained.view : null,
  );
  modalContent(renderJobDetail(job, explain, actions || []));
  // Only a job that is waiting has something to explain (docs/reference/additions.md C4).
  if (waiting) loadExplain(job.id, explain);
}

// A cancel request matters while the job is in flight; once it ended CANCELLED the request was honoured.
function stateBadges(job) {
  const requested = isCancelRequested(job);
  return [
    stateBadge(job.state),
    ' ',
    requested && ACTIVE_STATES.includes(job.state)
      ? h('span', { class: 'badge cancel-requested' }, 'cancel requested')
      : null,
    requested && job.state === 'CANCELLED'
      ? h('span', { class: 'muted small' }, 'cancelled on request')
      : null,
  ];
}

function renderJobDetail(job, explain, actions = []) {
  const gone = app.jobs.gone.has(job.id);
  const after = () => {
    refreshModal();
    refreshNow();
  };
  return h(
    'div',
    { id: 'job-detail', class: 'job-detail' },
    h('h2', null, 'Job ', stateBadges(job)),
    h('p', { class: 'job-id' }, job.id),
    fieldList(jobFields(job)),
    h(
      'div',
      { class: 'actions' },
      jobActions(job, gone, after),
      // Re-run a finished job with its payload, edited first if need be: a new job (issue 26).
      ACTIVE_STATES.includes(job.state)
        ? null
        : h(
            'button',
            {
              type: 'button',
              id: 'run-again',
              onclick: () =>
                openNewJob(app.jobs.bindings, app.jobs.notices, {
                  binding: job.binding,
                  payload: job.payload,
                }),
            },
            'Run again\u2026',
          ),
      job.state === 'SCHEDULED' && !isCancelRequested(job) ? rescheduleForm(job.id, after) : null,
    ),
    explain,
    renderAttempts(job),
    renderSteps(job),
    renderChanges(actions),
    h('h3', null, 'Payload'),
    h('pre', { id: 'job-payload', class: 'code' }, prettyJson(job.payload)),
    job.result !== null && job.result !== undefined
      ? [h('h3', null, 'Result'), h('pre', { class: 'code' }, prettyJson(job.result))]
      : null,
  );
}

// Who changed the job or its binding's policy through the API, newest first (ADR-0151).
const CHANGE_WORDS = {
  cancelJob: 'Cancelled',
  retryJob: 'Retried',
  rescheduleJob: 'Rescheduled',
  bulkCancelJobs: 'Cancelled (bulk)',
  bulkRetryJobs: 'Retried (bulk)',
  setBindingPolicy: "Binding's policy changed",
  resetBindingPolicy: "Binding's policy reset",
};

function renderChanges(actions) {
  if (actions.length === 0) return null;
  return [
    h('h3', null, 'Changes'),
    h(
      'ul',
      { id: 'job-changes', class: 'changes' },
      actions.map((a) =>
        h(
          'li',
          null,
          `${CHANGE_WORDS[a.action] || a.action} by ${a.by}`,
          a.role ? ` (${a.role}) ` : ' ',
          timeEl(a.at),
        ),
      ),
    ),
  ];
}

function jobFields(job) {
  const current = currentAttempt(job);
  const attempts =
    current === null
      ? `${job.attempts} of ${job.max_attempts}`
      : `${current} of ${job.max_attempts} (${job.state === 'RUNNING' ? 'running' : 'queued'})`;
  const pairs = [
    ['Binding', job.binding],
    ['Attempts', h('span', { id: 'job-attempts' }, attempts)],
  ];
  if (job.progress !== null && job.progress !== undefined) {
    const percent = Math.round(job.progress * 100);
    pairs.push([
      'Progress',
      h(
        'span',
        null,
        h('span', { class: 'progress' }, h('span', { style: `width:${percent}%` })),
        ` ${percent}%`,
      ),
    ]);
  }
  pairs.push(
    ['Guarantee', job.guarantee],
    ['Priority', String(job.priority)],
    ['Concurrency key', job.concurrency_key || '\u2014'],
    ['Unique key', job.unique_key || '\u2014'],
    ['Created', timeEl(job.created_at)],
    ['Run after', timeEl(job.run_after)],
    ['Dispatched', timeEl(job.dispatched_at)],
    ['Updated', timeEl(job.updated_at)],
  );
  if (job.timeout_ms) pairs.push(['Timeout', fmtDuration(job.timeout_ms)]);
  if (job.expires_at) pairs.push(['Expires', timeEl(job.expires_at)]);
  if (job.run_id) {
    pairs.push([
      'Run',
      h(
        'button',
        { type: 'button', class: 'link', onclick: () => openRun(job.run_id) },
        job.node_id ? `${job.run_id} (node ${job.node_id})` : job.run_id,
      ),
    ]);
  }
  if (job.traceparent) pairs.push(['Trace', job.traceparent]);
  return pairs;
}

// An attempt the engine logged FAILED although it ended the job CANCELLED (schedulers before issue 11 did)
// shows as what it was: stopped after the cancel request.
function attemptState(attempt, job, isLast) {
  const stopped = isLast && attempt.state === 'FAILED' && job.state === 'CANCELLED' && isCancelRequested(job);
  return stopped ? 'CANCELLED' : attempt.state;
}

// The attempt timeline, oldest first (the API sends newest first): when each ran, for how long, how it
// ended; its traceback full width below it (wrapped, no inner scrollbar).
function renderAttempts(job) {
  const log = [...(job.attempts_log || [])].reverse();
  const current = currentAttempt(job);
  const live = current !== null && !log.some((a) => a.attempt === current) ? liveAttempt(job, current) : null;
  if (!log.length && !live) return null;
  const items = log.map((a, index) => {
    const state = attemptState(a, job, index === log.length - 1);
    const took = a.started_at && a.finished_at ? a.finished_at - a.started_at : null;
    return h(
      'li',
      { class: `attempt-row attempt-${state.toLowerCase()}` },
      h(
        'div',
        { class: 'attempt-head' },
        h('strong', null, `#${a.attempt}`),
        ' ',
        stateBadge(state),
        h(
          'span',
          { class: 'attempt-time' },
          'started ',
          timeEl(a.started_at),
          a.finished_at ? [', took ', h('strong', null, fmtDuration(took))] : null,
        ),
      ),
      a.error ? attemptError(a, log, index) : null,
    );
  });
  return [
    h('h3', null, `Attempts (${log.length + (live ? 1 : 0)})`),
    h('ol', { id: 'attempts-log', class: 'timeline' }, items, live),
  ];
}

// The last attempt's traceback shows; earlier ones fold under their first line (issue 26: five identical
// tracebacks, all open), and one identical to the next attempt's says so instead of repeating it.
function attemptError(attempt, log, index) {
  const trace = h('pre', { class: 'trace' }, attempt.error);
  if (index === log.length - 1) return trace;
  const next = log[index + 1];
  const lines = attempt.error.trim().split('\n');
  const summary =
    next && next.error === attempt.error ? `same error as #${next.attempt}` : lines[lines.length - 1];
  return h('details', { class: 'attempt-error' }, h('summary', null, summary), trace);
}

// The attempt under way, last in the timeline: the log holds finished attempts only.
function liveAttempt(job, number) {
  const started = job.state === 'RUNNING' ? job.dispatched_at : null;
  return h(
    'li',
    { class: `attempt-row attempt-live attempt-${job.state.toLowerCase()}` },
    h(
      'div',
      { class: 'attempt-head' },
      h('strong', null, `#${number}`),
      ' ',
      stateBadge(job.state),
      h(
        'span',
        { class: 'attempt-time' },
        started ? ['started ', timeEl(started), ', in progress'] : 'waiting to start',
      ),
    ),
  );
}

function rescheduleForm(id, after) {
  const delay = h('input', {
    type: 'number',
    min: '0',
    step: '1',
    value: '0',
    'aria-label': 'Delay in seconds',
    style: 'width:7em',
  });
  return h(
    'span',
    null,
    'Run in ',
    delay,
    ' s ',
    h(
      'button',
      {
        type: 'button',
        'data-needs': 'operator',
        onclick: () => {
          const seconds = Number(delay.value);
          if (!Number.isFinite(seconds) || seconds < 0) {
            setStatus('Delay must be a number of seconds, at least 0', true);
            return;
          }
          mutateJob(id, 'reschedule', after, { delayMs: Math.round(seconds * 1000) });
        },
      },
      'Reschedule',
    ),
  );
}
