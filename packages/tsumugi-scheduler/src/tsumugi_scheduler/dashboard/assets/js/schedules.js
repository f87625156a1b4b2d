/* global $, API, apiCall, durationWords, fmtDuration, h, openJob, openRun, option, refreshNow, replace,
   setStatus, timeEl, withQuery */
/* exported loadSchedules */

// The schedules tab (issue 12): each schedule's target, timing in words, next occurrences, last run (linked to
// its job), last error and skips, with pause / resume / run now, deleting a run-time schedule (after an
// in-row confirmation) and a form that creates one. Code-defined schedules are read-only but for the controls.

const SCHEDULE_NEXT_SHOWN = 3;

// The tab shows one page of schedules, by name, and asks for no more than that every few seconds (issue 25):
// "Next page" continues after the last name shown, "First page" goes back.
const SCHEDULE_PAGE = 50;
const schedulePages = { after: '' };

async function loadSchedules(isCurrent) {
  const [data, bindings, flows] = await Promise.all([
    apiCall(withQuery(API.schedules, { limit: SCHEDULE_PAGE, after: schedulePages.after })),
    apiCall(API.bindings).catch(() => ({ bindings: [] })),
    apiCall(API.flows).catch(() => ({ flows: [] })),
  ]);
  if (!isCurrent()) return;
  const rows = data.schedules || [];
  const paging = h(
    'p',
    { class: 'schedule-pages' },
    schedulePages.after
      ? h(
          'button',
          {
            type: 'button',
            onclick: () => {
              schedulePages.after = '';
              refreshNow();
            },
          },
          'First page',
        )
      : null,
    data.next
      ? h(
          'button',
          {
            type: 'button',
            onclick: () => {
              schedulePages.after = data.next;
              refreshNow();
            },
          },
          'Next page',
        )
      : null,
  );
  const head = ['Name', 'Target', 'Timing', 'Next occurrences', 'Last run', 'Skipped', ''];
  // The form keeps what the user typed across auto-refreshes: it is rebuilt only when missing.
  const form = $('#schedule-create') || scheduleCreateForm(bindings.bindings || [], flows.flows || []);
  replace(
    $('#view'),
    rows.length
      ? h(
          'table',
          { id: 'schedules-table' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              head.map((t) => h('th', null, t)),
            ),
          ),
          h('tbody', null, rows.map(renderScheduleRow)),
        )
      : h('p', { class: 'empty' }, 'No schedules.'),
    paging,
    form,
  );
}

// How late the alarm fired after the occurrence's time, in words; under a second is not worth a word (issue 26:
// a bare "+1 ms" read as noise).
function scheduleLate(s) {
  const late = s.last_fired_at && s.last_run_at ? s.last_fired_at - s.last_run_at : 0;
  return late >= 1000
    ? h(
        'div',
        { class: 'muted schedule-late', title: 'The alarm fired this long after the occurrence was due' },
        `fired ${fmtDuration(late)} late`,
      )
    : null;
}

function renderScheduleRow(s) {
  // A flow schedule's last run is a flow run (#/runs/<id>); a job schedule's is a job.
  const link =
    s.kind === 'flow'
      ? s.last_run_id
        ? h(
            'button',
            { type: 'button', class: 'link schedule-run', onclick: () => openRun(s.last_run_id) },
            s.last_run_id,
          )
        : null
      : s.last_job_id
        ? h(
            'button',
            { type: 'button', class: 'link schedule-job', onclick: () => openJob(s.last_job_id) },
            s.last_job_id,
          )
        : null;
  const next = (s.next_occurrences || []).slice(0, SCHEDULE_NEXT_SHOWN);
  // data-label names each cell where the phone layout stacks them as a card (style.css).
  return h(
    'tr',
    { class: 'schedule-row', 'data-name': s.name },
    h(
      'td',
      { 'data-label': 'Name', class: 'schedule-name' },
      h('strong', null, s.name),
      ' ',
      h(
        'span',
        {
          class: 'badge schedule-source',
          title: s.source === 'code' ? 'Defined in code: read-only here' : 'Created at run time',
        },
        s.source,
      ),
      s.paused ? [' ', h('span', { class: 'badge st-cancelled schedule-paused' }, 'paused')] : null,
      s.last_error ? h('div', { class: 'error-text schedule-error' }, s.last_error) : null,
    ),
    h(
      'td',
      { 'data-label': 'Target', class: 'schedule-target' },
      h('span', { class: 'badge st-cancelled' }, s.kind),
      ' ',
      s.target,
    ),
    h(
      'td',
      { 'data-label': 'Timing', class: 'schedule-timing' },
      s.description,
      h(
        'div',
        { class: 'muted' },
        s.cron ? `cron ${s.cron}` : `every ${durationWords(s.every_ms)}`,
        ` \u00b7 overlap ${s.overlap}`,
      ),
    ),
    h(
      'td',
      { 'data-label': 'Next', class: 'schedule-next' },
      s.paused
        ? 'paused'
        : next.length
          ? next.map((at) => h('div', null, timeEl(at, { compact: true })))
          : '\u2014',
    ),
    h(
      'td',
      { 'data-label': 'Last run', class: 'schedule-last' },
      timeEl(s.last_run_at, { compact: true }),
      scheduleLate(s),
      link ? h('div', null, link) : null,
    ),
    h(
      'td',
      { 'data-label': 'Skipped', class: 'schedule-skipped' },
      String(s.skipped_count || 0),
      s.last_skipped_at
        ? h('div', { class: 'muted' }, 'last ', timeEl(s.last_skipped_at, { compact: true }))
        : null,
    ),
    // The cell stays a table cell (its borders line up); the buttons wrap inside it.
    h('td', { class: 'schedule-actions' }, h('span', { class: 'actions' }, scheduleActions(s))),
  );
}

function scheduleActions(s) {
  const buttons = [
    s.paused
      ? h(
          'button',
          {
            type: 'button',
            class: 'schedule-resume',
            'data-needs': 'operator',
            onclick: () => scheduleControl(API.scheduleResume(s.name), `Resumed ${s.name}`),
          },
          'Resume',
        )
      : h(
          'button',
          {
            type: 'button',
            class: 'schedule-pause',
            'data-needs': 'operator',
            onclick: () => scheduleControl(API.schedulePause(s.name), `Paused ${s.name}`),
          },
          'Pause',
        ),
    h(
      'button',
      {
        type: 'button',
        class: 'schedule-trigger',
        'data-needs': 'operator',
        onclick: () => scheduleControl(API.scheduleTrigger(s.name), `Enqueued one ${s.name} job`),
      },
      'Run now',
    ),
  ];
  if (s.source === 'runtime') {
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: 'danger schedule-delete',
          'data-needs': 'admin',
          onclick: (event) => confirmScheduleDelete(event.target, s.name),
        },
        'Delete',
      ),
    );
  }
  return buttons;
}

// Deleting cannot be undone: the row asks first, in place (no browser dialog).
function confirmScheduleDelete(button, name) {
  const cell = button.closest('td');
  replace(
    cell,
    h(
      'span',
      { class: 'schedule-confirm' },
      `Delete schedule ${name}? `,
      h(
        'button',
        {
          type: 'button',
          class: 'danger schedule-delete-yes',
          onclick: () => scheduleControl(API.schedule(name), `Deleted ${name}`, 'DELETE'),
        },
        'Delete',
      ),
      h('button', { type: 'button', class: 'schedule-delete-no', onclick: () => refreshNow() }, 'Keep'),
    ),
  );
}

async function scheduleControl(path, done, method = 'POST') {
  try {
    await apiCall(path, { method });
    setStatus(done);
  } catch (error) {
    setStatus(error.message, true);
  }
  await refreshNow();
}

function scheduleCreateForm(bindings, flows = []) {
  const result = h('p', { class: 'schedule-create-result', hidden: true });
  // A schedule starts a job of a binding or, when flows exist, a run of a flow (issue 26).
  const target = flows.length
    ? [
        'Starts',
        h(
          'select',
          { name: 'target', 'aria-label': 'Starts' },
          option('job', 'a job'),
          option('flow', 'a flow run'),
        ),
      ]
    : [];
  const form = h(
    'form',
    { class: 'grid schedule-form' },
    'Name',
    h('input', {
      name: 'name',
      required: true,
      pattern: '[A-Za-z0-9_\\-]+',
      maxlength: '64',
      placeholder: 'customer-42-report',
    }),
    target,
    'Binding',
    h(
      'select',
      { name: 'binding' },
      bindings.map((b) => option(b, b)),
    ),
    flows.length
      ? [
          'Flow',
          h(
            'select',
            { name: 'flow' },
            flows.map((f) => option(f, f)),
          ),
        ]
      : null,
    'Payload or input (JSON)',
    h('textarea', { name: 'payload', rows: '3' }, '{}'),
    'Timing',
    h('select', { name: 'kind' }, option('every', 'every N seconds'), option('cron', 'cron expression')),
    'Every (seconds)',
    h('input', { name: 'every', type: 'number', step: 'any', value: '60' }),
    'Cron',
    h('input', { name: 'cron', placeholder: '0 3 * * *' }),
    'Time zone (cron)',
    h('input', { name: 'timezone', placeholder: 'UTC, Asia/Tokyo, Europe/Berlin...' }),
    'Overlap',
    h(
      'select',
      { name: 'overlap' },
      option('skip', 'skip while the last job is active'),
      option('overlap', 'overlap'),
    ),
    'Max attempts',
    h('input', { name: 'maxAttempts', type: 'number', min: '1', placeholder: 'default' }),
    h('span'),
    h(
      'span',
      { class: 'actions' },
      h('button', { type: 'submit', class: 'primary', 'data-needs': 'admin' }, 'Create schedule'),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    createSchedule(form, result);
  });
  return h(
    'details',
    { id: 'schedule-create', class: 'card' },
    h('summary', null, 'New schedule'),
    form,
    result,
  );
}

// The body of POST /api/schedules from the form; a field the user left empty is not sent.
function scheduleBody(form) {
  const value = (name) => form.elements[name].value.trim();
  let payload;
  try {
    payload = JSON.parse(value('payload') || 'null');
  } catch {
    throw new Error('payload must be valid JSON');
  }
  const flow = form.elements.target && value('target') === 'flow';
  const body = flow
    ? { name: value('name'), flow: value('flow'), input: payload, overlap: value('overlap') }
    : { name: value('name'), binding: value('binding'), payload, overlap: value('overlap') };
  if (value('kind') === 'cron') {
    body.cron = value('cron');
    if (value('timezone')) body.timezone = value('timezone');
  } else {
    body.everyMs = Math.round(Number(value('every')) * 1000);
  }
  if (!flow && value('maxAttempts')) body.maxAttempts = Number(value('maxAttempts')); // job options only
  return body;
}

async function createSchedule(form, result) {
  result.hidden = false;
  result.classList.remove('error-text');
  try {
    const answer = await apiCall(API.schedules, { method: 'POST', body: scheduleBody(form) });
    result.textContent = `Created ${answer.schedule.name}: ${answer.schedule.description}`;
    form.reset();
  } catch (error) {
    result.textContent = error.message;
    result.classList.add('error-text');
    return;
  }
  await refreshNow();
}
