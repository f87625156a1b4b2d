/* global $, ACTIVE_STATES, API, STATES, apiCall, app, confirmAction, dayEnd, dayStart, fmtDuration, h,
   openJob, openNewJob, option, readStored, refreshNow, replace, setStatus, stateBadge, timeEl, withQuery,
   writeStored */
/* exported currentAttempt, freshJobsView, isCancelRequested, jobActions, loadJobs, mutateJob */

// The jobs tab: stats, search, filters, the table (sortable, selectable, row actions), paging, bulk actions.

const JOB_ID_RE = /^[A-Za-z_][A-Za-z0-9_]*#\d+:[A-Za-z0-9_-]+$/;
const OPTIONAL_COLUMNS = ['id', 'started', 'updated', 'attempts', 'processing'];
const SEARCH_FIELDS = [
  ['id', 'ID'],
  ['text', 'Payload or error text'],
  ['unique_key', 'Unique key'],
  ['concurrency_key', 'Concurrency key'],
];
const PAGE_SIZES = [10, 20, 30, 50];

function freshJobsView() {
  return {
    search: { field: 'id', text: '' },
    binding: '',
    state: '',
    from: '',
    to: '',
    sort: 'updated_at',
    order: 'desc',
    page: 0,
    size: 20,
    selected: new Set(),
    gone: new Set(),
    rows: [],
    total: 0,
    stats: null,
    bindings: [],
    notices: [],
    hideNotices: readStored('tsumugi:hideNotices', true) !== false,
  };
}

// Notice jobs (the scheduler's failure/settled notices, GET /api/bindings "notices") are hidden by default (ADR-0073):
// every failed or settled job makes one, so they would outnumber the operator's own jobs. Choosing a notice
// binding in the binding filter shows them anyway.
function excludedBindings(view) {
  return view.hideNotices && !view.binding ? view.notices : [];
}

function visibleColumns() {
  const stored = readStored('tsumugi:columns', null);
  const valid = Array.isArray(stored) && stored.every((c) => OPTIONAL_COLUMNS.includes(c));
  return new Set(valid ? stored : OPTIONAL_COLUMNS); // corrupt values fall back to every column
}

function jobsQuery(view) {
  return {
    state: view.state,
    binding: view.binding,
    [view.search.field]: view.search.text,
    created_from: dayStart(view.from),
    created_to: dayEnd(view.to),
    exclude_bindings: excludedBindings(view).join(','),
    sort: view.sort,
    order: view.order,
    limit: view.size,
    offset: view.page * view.size,
  };
}

async function loadJobs(isCurrent) {
  const view = app.jobs;
  const [list, stats, bindings] = await Promise.all([
    apiCall(withQuery(API.jobs, jobsQuery(view))),
    // The counts leave out what the list leaves out, so the chips add up to the list's total (issue 26).
    apiCall(withQuery(API.stats, { exclude_bindings: excludedBindings(view).join(',') })).catch(() => null),
    apiCall(API.bindings).catch(() => ({ bindings: view.bindings, notices: view.notices })),
  ]);
  if (!isCurrent()) return; // a newer load or another tab won the race
  view.rows = list.jobs || [];
  view.total = list.total || 0;
  view.totalCapped = list.total_capped === true; // capped at 10,000: shown as 10,000+
  view.searched = typeof list.searched === 'number' ? list.searched : null; // a text search says how far it read
  view.stats = stats;
  view.bindings = bindings.bindings || [];
  view.notices = bindings.notices || [];
  const visible = new Set(view.rows.map((job) => job.id));
  view.selected = new Set([...view.selected].filter((id) => visible.has(id)));
  renderJobs();
}

function changeFilter(mutate) {
  mutate(app.jobs);
  app.jobs.page = 0; // any filter change starts from the first page
  refreshNow();
}

function renderJobs() {
  const view = app.jobs;
  replace(
    $('#view'),
    renderStats(view.stats),
    renderJobsToolbar(view),
    renderBulkBar(view),
    renderJobsTable(view),
    renderPager(view),
  );
}

function renderStats(stats) {
  if (!stats || !stats.byState) return null;
  const chips = STATES.filter((s) => stats.byState[s]).map((s) =>
    h(
      'span',
      {
        class: `chip st-${s.toLowerCase()}`,
        title: `Show ${s} jobs`,
        onclick: () =>
          changeFilter((v) => {
            v.state = s;
          }),
      },
      `${s} ${stats.byState[s]}`,
    ),
  );
  const oldest = stats.oldestScheduledMs;
  return h(
    'div',
    { class: 'chips' },
    chips,
    oldest ? h('span', { class: 'muted' }, `oldest scheduled: waiting ${fmtDuration(oldest)}`) : null,
  );
}

function renderJobsToolbar(view) {
  const field = h(
    'select',
    {
      'aria-label': 'Search field',
      onchange: (e) => {
        view.search.field = e.target.value;
      },
    },
    SEARCH_FIELDS.map(([value, label]) => option(value, label, value === view.search.field)),
  );
  const text = h('input', {
    type: 'search',
    placeholder: view.search.field === 'text' ? 'contains' : 'exact match',
    value: view.search.text,
    'aria-label': 'Search',
    onchange: (e) => commitSearch(e.target.value.trim()),
  });
  const binding = h(
    'select',
    {
      'aria-label': 'Binding',
      onchange: (e) =>
        changeFilter((v) => {
          v.binding = e.target.value;
        }),
    },
    option('', 'All bindings'),
    view.bindings.map((b) => option(b, b, b === view.binding)),
  );
  const status = h(
    'select',
    {
      'aria-label': 'Status',
      onchange: (e) =>
        changeFilter((v) => {
          v.state = e.target.value;
        }),
    },
    option('', 'All states'),
    STATES.map((s) => option(s, s, s === view.state)),
  );
  const from = h('input', {
    type: 'date',
    value: view.from,
    'aria-label': 'Created from',
    onchange: (e) =>
      changeFilter((v) => {
        v.from = e.target.value;
      }),
  });
  const to = h('input', {
    type: 'date',
    value: view.to,
    'aria-label': 'Created to',
    onchange: (e) =>
      changeFilter((v) => {
        v.to = e.target.value;
      }),
  });
  const active = view.search.text || view.binding || view.state || view.from || view.to;
  const notices = view.notices.length
    ? h(
        'label',
        { class: 'notice-filter', title: `Notice bindings: ${view.notices.join(', ')}` },
        h('input', {
          type: 'checkbox',
          id: 'hide-notices',
          checked: view.hideNotices,
          onchange: (e) =>
            changeFilter((v) => {
              v.hideNotices = e.target.checked;
              writeStored('tsumugi:hideNotices', v.hideNotices);
            }),
        }),
        ' Hide notice jobs',
      )
    : null;
  return h(
    'div',
    { class: 'toolbar' },
    field,
    text,
    binding,
    status,
    notices,
    h('span', { class: 'created' }, 'Created ', from, ' \u2013 ', to),
    active
      ? h(
          'button',
          {
            type: 'button',
            onclick: () =>
              changeFilter((v) =>
                Object.assign(v, {
                  search: { field: 'id', text: '' },
                  binding: '',
                  state: '',
                  from: '',
                  to: '',
                }),
              ),
          },
          'Reset',
        )
      : null,
    retryAllButton(view),
    h('span', { class: 'spacer' }),
    renderColumnMenu(),
    h(
      'button',
      {
        type: 'button',
        class: 'primary',
        'data-needs': 'operator',
        onclick: () => openNewJob(view.bindings, view.notices),
      },
      '+ Job',
    ),
  );
}

// Search commits on change/Enter, not per keystroke; a full job id opens the job directly.
function commitSearch(text) {
  if (app.jobs.search.field === 'id' && JOB_ID_RE.test(text)) {
    openJob(text);
    return;
  }
  changeFilter((v) => {
    v.search.text = text;
  });
}

function renderColumnMenu() {
  const shown = visibleColumns();
  const boxes = OPTIONAL_COLUMNS.map((column) =>
    h(
      'label',
      null,
      h('input', {
        type: 'checkbox',
        checked: shown.has(column),
        onchange: (e) => {
          if (e.target.checked) shown.add(column);
          else shown.delete(column);
          writeStored('tsumugi:columns', [...shown]);
          renderJobs();
        },
      }),
      ` ${column}`,
    ),
  );
  return h('details', { class: 'columns' }, h('summary', null, 'View'), h('div', { class: 'chips' }, boxes));
}

// "Retry all failed" of the chosen binding (issue 26): bulk-retry by filter, 200 a call, until none remain or a
// call changes nothing (the list lags the shards by a moment; a second press picks up the rest).
function retryAllButton(view) {
  if (!view.binding || (view.state && view.state !== 'FAILED')) return null;
  if (view.stats && view.stats.byState && !view.stats.byState.FAILED && view.state !== 'FAILED') return null;
  return h(
    'button',
    { type: 'button', id: 'retry-all-failed', onclick: () => retryAllFailed(view.binding) },
    `Retry all failed ${view.binding}`,
  );
}

async function retryAllFailed(binding) {
  const confirmed = await confirmAction({
    title: `Retry every failed ${binding} job?`,
    message: `Each FAILED ${binding} job is scheduled again now, oldest first.`,
    confirmLabel: 'Retry all failed',
  });
  if (!confirmed) return;
  let retried = 0;
  let remaining = 0;
  try {
    for (let round = 0; round < 50; round += 1) {
      // at most 10,000 jobs a press
      const answer = await apiCall(API.bulkRetry, { method: 'POST', body: { binding, state: 'FAILED' } });
      retried += (answer.ok || []).length;
      remaining = answer.remaining || 0;
      if (!remaining || !(answer.ok || []).length) break;
    }
    setStatus(
      `Retried ${retried} failed ${binding} job${retried === 1 ? '' : 's'}` +
        (remaining ? `; about ${remaining} more are listed as failed: press again in a moment` : ''),
    );
  } catch (error) {
    setStatus(`Retry all failed ${binding}: ${error.message}`, true);
  }
  refreshNow();
}

function renderBulkBar(view) {
  const count = view.selected.size;
  if (!count) return null;
  return h(
    'div',
    { class: 'toolbar' },
    `${count} selected`,
    h(
      'button',
      { type: 'button', 'data-needs': 'operator', onclick: () => bulkAction('retry') },
      'Retry selected',
    ),
    h(
      'button',
      { type: 'button', class: 'danger', 'data-needs': 'operator', onclick: () => bulkAction('cancel') },
      'Cancel selected',
    ),
  );
}

async function bulkAction(action) {
  const ids = [...app.jobs.selected];
  const count = ids.length === 1 ? '1 job' : `${ids.length} jobs`;
  const applies =
    action === 'retry'
      ? 'Applies to FAILED and STALLED jobs.'
      : 'Scheduled jobs end CANCELLED now; queued and running jobs are asked to stop. This cannot be undone.';
  const confirmed = await confirmAction({
    title: `${action === 'retry' ? 'Retry' : 'Cancel'} ${count}?`,
    message: `${applies} Jobs in other states are refused and reported.`,
    confirmLabel: action === 'retry' ? `Retry ${count}` : `Cancel ${count}`,
  });
  if (!confirmed) return;
  try {
    const answer = await apiCall(action === 'retry' ? API.bulkRetry : API.bulkCancel, {
      method: 'POST',
      body: { ids },
    });
    const refused = (answer.failed || []).length;
    setStatus(`${(answer.ok || []).length} accepted${refused ? `, ${refused} refused` : ''}`);
  } catch (error) {
    setStatus(`Bulk ${action} failed: ${error.message}`, true);
  }
  app.jobs.selected.clear();
  refreshNow();
}

const SORTABLE = { binding: 'binding', state: 'state', updated: 'updated_at', attempts: 'attempts' };

function header(key, label, view) {
  const column = SORTABLE[key];
  if (!column) return h('th', { class: `col-${key}` }, label);
  const sorted = view.sort === column;
  const onclick = () => {
    // Clicking the sorted column flips it; another column starts descending.
    view.order = sorted && view.order === 'desc' ? 'asc' : 'desc';
    view.sort = column;
    refreshNow();
  };
  const classes = `col-${key} sortable${sorted ? ' sorted' : ''}${sorted && view.order === 'asc' ? ' asc' : ''}`;
  return h('th', { class: classes, onclick }, label);
}

function renderJobsTable(view) {
  if (!view.rows.length) return h('p', { class: 'empty' }, 'No jobs.');
  const shown = visibleColumns();
  const all = view.rows.every((job) => view.selected.has(job.id));
  const selectAll = h('input', {
    type: 'checkbox',
    checked: all,
    'aria-label': 'Select page',
    onchange: (e) => {
      view.rows.forEach((job) =>
        e.target.checked ? view.selected.add(job.id) : view.selected.delete(job.id),
      );
      renderJobs();
    },
  });
  const columns = [
    ['binding', 'Binding'],
    ['id', 'ID'],
    ['state', 'Status'],
    ['started', 'Started at'],
    ['updated', 'Updated at'],
    ['attempts', 'Attempts'],
    ['processing', 'Processing time'],
  ].filter(([key]) => !OPTIONAL_COLUMNS.includes(key) || shown.has(key));
  return h(
    'table',
    { id: 'jobs-table' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', null, selectAll),
        columns.map(([k, l]) => header(k, l, view)),
        h('th', null, ''),
      ),
    ),
    h(
      'tbody',
      null,
      view.rows.map((job) => renderJobRow(job, view, columns)),
    ),
  );
}

// Processing time is that of a finished attempt only: dispatch to the final report. (For a job still in
// flight, updated_at is its last heartbeat or mark, not an end.)
function processingTime(job) {
  const finished = !ACTIVE_STATES.includes(job.state);
  return finished && job.dispatched_at && job.updated_at > job.dispatched_at
    ? job.updated_at - job.dispatched_at
    : null;
}

function renderJobRow(job, view, columns) {
  const processing = processingTime(job);
  const cells = {
    binding: h('td', { class: 'col-binding' }, job.binding),
    id: h(
      'td',
      { class: 'col-id id' },
      h('button', { type: 'button', class: 'link', onclick: () => openJob(job.id) }, job.id),
    ),
    state: h('td', { class: 'col-state' }, stateBadge(job.state)),
    started: h('td', { class: 'col-started' }, timeEl(job.dispatched_at, { compact: true })),
    updated: h('td', { class: 'col-updated' }, timeEl(job.updated_at, { compact: true })),
    attempts: h('td', { class: 'col-attempts num' }, attemptsText(job)),
    processing: h('td', { class: 'col-processing num' }, fmtDuration(processing)),
  };
  const check = h('input', {
    type: 'checkbox',
    checked: view.selected.has(job.id),
    'aria-label': `Select ${job.id}`,
    onchange: (e) => {
      if (e.target.checked) view.selected.add(job.id);
      else view.selected.delete(job.id);
      renderJobs();
    },
  });
  // The whole row opens the job (the id column may be hidden on a narrow screen); its controls keep their own.
  const open = (event) => {
    if (!event.target.closest('button, input, a, label')) openJob(job.id);
  };
  return h(
    'tr',
    {
      class: `job-row${view.gone.has(job.id) ? ' gone' : ''}`,
      'data-id': job.id,
      onclick: open,
      title: `Open ${job.id}`,
    },
    h('td', null, check),
    columns.map(([key]) => cells[key]),
    h('td', null, jobActions(job, view.gone.has(job.id))),
  );
}

// "2 / 3" while the second attempt is under way: `attempts` counts finished attempts only, so a running job
// shows its current_attempt (the API's; attempts + 1 from an older API while QUEUED or RUNNING).
function currentAttempt(job) {
  if (job.current_attempt !== undefined) return job.current_attempt;
  return job.state === 'QUEUED' || job.state === 'RUNNING' ? job.attempts + 1 : null;
}

function attemptsText(job) {
  const current = currentAttempt(job);
  return `${current === null ? job.attempts : current} / ${job.max_attempts}`;
}

function canRetry(job, gone) {
  return !gone && job.retryable !== false && (job.state === 'FAILED' || job.state === 'STALLED');
}

function canCancel(job, gone) {
  return !gone && ACTIVE_STATES.includes(job.state) && !isCancelRequested(job);
}

function isCancelRequested(job) {
  return (
    job.cancel_requested === true ||
    (job.cancel_requested_at !== null && job.cancel_requested_at !== undefined)
  );
}

// Only the actions a job can take are shown: a disabled Retry and Cancel on every row was noise (issue 26).
// A failed job past its retention says so where its Retry would be.
/** @param {() => unknown} [after] what to do once an action succeeded */
function jobActions(job, gone, after = refreshNow) {
  const expired = (job.state === 'FAILED' || job.state === 'STALLED') && (gone || job.retryable === false);
  return h(
    'span',
    { class: 'actions' },
    canRetry(job, gone)
      ? h(
          'button',
          { type: 'button', 'data-needs': 'operator', onclick: () => mutateJob(job.id, 'retry', after) },
          'Retry',
        )
      : null,
    canCancel(job, gone)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'data-needs': 'operator',
            onclick: () => mutateJob(job.id, 'cancel', after),
          },
          'Cancel',
        )
      : null,
    expired
      ? h(
          'span',
          { class: 'muted small', title: 'Removed from the coordinator after the retention period' },
          'past retention',
        )
      : null,
  );
}

async function mutateJob(id, action, after, body) {
  const path = { retry: API.jobRetry, cancel: API.jobCancel, reschedule: API.jobReschedule }[action](id);
  if (
    action === 'cancel' &&
    !(await confirmAction({
      title: 'Cancel this job?',
      message: `${id}: a scheduled job ends CANCELLED now; a queued or running one is asked to stop. This cannot be undone.`,
      confirmLabel: 'Cancel job',
    }))
  )
    return;
  try {
    const answer = await apiCall(path, { method: 'POST', body });
    // A6: a queued or running job is asked to stop; it ends CANCELLED once the performer gives up.
    setStatus(answer && answer.requested ? `Cancel requested for ${id}` : `${action} accepted for ${id}`);
  } catch (error) {
    if (error.status === 410) app.jobs.gone.add(id);
    setStatus(`${action} refused for ${id}: ${error.message}`, true);
  }
  after();
}

function renderPager(view) {
  const pages = Math.max(1, Math.ceil(view.total / view.size));
  const go = (page) => {
    view.page = Math.min(Math.max(page, 0), pages - 1);
    refreshNow();
  };
  const size = h(
    'select',
    {
      'aria-label': 'Rows per page',
      onchange: (e) => {
        view.size = Number(e.target.value);
        go(0);
      },
    },
    PAGE_SIZES.map((n) => option(String(n), `${n} / page`, n === view.size)),
  );
  const searched =
    view.searched !== null && view.searched !== undefined
      ? h(
          'span',
          { id: 'jobs-searched', class: 'muted' },
          view.searched >= 2000
            ? `searched the first ${view.searched.toLocaleString('en-US')} jobs of this list: narrow the binding, state or dates to look further`
            : `searched ${view.searched} jobs`,
        )
      : null;
  return h(
    'div',
    { class: 'pager' },
    h(
      'span',
      { id: 'jobs-total' },
      view.totalCapped ? `${view.total.toLocaleString('en-US')}+ jobs` : `${view.total} jobs`,
    ),
    searched,
    size,
    `Page ${view.page + 1} of ${pages}`,
    h('button', { type: 'button', disabled: view.page === 0, onclick: () => go(0) }, 'First'),
    h('button', { type: 'button', disabled: view.page === 0, onclick: () => go(view.page - 1) }, 'Previous'),
    h(
      'button',
      { type: 'button', disabled: view.page >= pages - 1, onclick: () => go(view.page + 1) },
      'Next',
    ),
    h('button', { type: 'button', disabled: view.page >= pages - 1, onclick: () => go(pages - 1) }, 'Last'),
  );
}
