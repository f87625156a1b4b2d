/* global $, API, apiCall, app, durationWords, enc, fmtDuration, h, modalContent, openModal, openRun, option,
   refreshNow, replace, setStatus, stateBadge, timeEl, withQuery */
/* exported loadRuns, runLink */

// The runs tab (flows): the list from GET /api/runs with Flow and Status filters and paging. Shown only when
// flows exist (app.js). A run opens in run_detail.js.

const RUN_STATES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'];
const RUNS_PAGE = 20;

async function loadRuns(isCurrent) {
  const view = app.runs;
  const [data, flows] = await Promise.all([
    apiCall(
      withQuery(API.runs, {
        flow: view.flow,
        state: view.state,
        limit: RUNS_PAGE,
        offset: view.page * RUNS_PAGE,
      }),
    ),
    apiCall(API.flows).catch(() => ({ flows: [] })),
  ]);
  if (!isCurrent()) return;
  const total = data.total || 0;
  const pages = Math.max(1, Math.ceil(total / RUNS_PAGE));
  const filter = (key) => (event) => {
    view[key] = event.target.value;
    view.page = 0;
    refreshNow();
  };
  const go = (page) => () => {
    view.page = page;
    refreshNow();
  };
  const active = view.flow || view.state;
  replace(
    $('#view'),
    h(
      'div',
      { class: 'toolbar', id: 'runs-filters' },
      h(
        'select',
        { 'aria-label': 'Flow', id: 'runs-flow', onchange: filter('flow') },
        option('', 'All flows'),
        (flows.flows || []).map((f) => option(f, f, f === view.flow)),
      ),
      h(
        'select',
        { 'aria-label': 'Status', id: 'runs-state', onchange: filter('state') },
        option('', 'All states'),
        RUN_STATES.map((s) => option(s, s, s === view.state)),
      ),
      active
        ? h(
            'button',
            {
              type: 'button',
              onclick: () => {
                Object.assign(view, { flow: '', state: '', page: 0 });
                refreshNow();
              },
            },
            'Reset',
          )
        : null,
      h('span', { class: 'spacer' }),
      (flows.flows || []).length
        ? h(
            'button',
            {
              type: 'button',
              class: 'primary',
              id: 'new-run-open',
              'data-needs': 'operator',
              onclick: () => openNewRun(flows.flows),
            },
            '+ Run',
          )
        : null,
    ),
    renderRunsTable(data.runs || []),
    h(
      'div',
      { class: 'pager', id: 'runs-pager' },
      h('span', { id: 'runs-total' }, `${total} runs`),
      h('span', { id: 'runs-page' }, `Page ${view.page + 1} of ${pages}`),
      h('button', { type: 'button', disabled: view.page === 0, onclick: go(0) }, 'First'),
      h('button', { type: 'button', disabled: view.page === 0, onclick: go(view.page - 1) }, 'Previous'),
      h('button', { type: 'button', disabled: view.page >= pages - 1, onclick: go(view.page + 1) }, 'Next'),
      h('button', { type: 'button', disabled: view.page >= pages - 1, onclick: go(pages - 1) }, 'Last'),
    ),
  );
}

function renderRunsTable(runs) {
  if (!runs.length) return h('p', { class: 'empty' }, 'No runs.');
  const head = [
    ['Flow', ''],
    ['ID', 'runs-col-id'],
    ['Status', ''],
    ['Nodes', ''],
    ['Started', 'runs-col-started'],
    ['Duration', 'runs-col-duration'],
    ['Updated', 'runs-col-updated'],
  ];
  return h(
    'table',
    { id: 'runs-table' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map(([t, c]) => h('th', { class: c || null }, t)),
      ),
    ),
    h(
      'tbody',
      null,
      runs.map((run) =>
        h(
          'tr',
          {
            class: 'run-row',
            'data-id': run.id,
            title: `Open ${run.id}`,
            // The whole row opens the run (issue 26); its link keeps its own click (new tab, copy).
            onclick: (event) => {
              if (!event.target.closest('a, button')) openRun(run.id);
            },
          },
          // On narrow screens the ID column hides and the id shows under the flow, as the original does.
          // It may wrap after the flow's colon ("greetings:" / "bulk01"), not mid-word (issue 26, phone width).
          h(
            'td',
            null,
            run.flow,
            h('div', { class: 'runs-narrow-id' }, runLink(run.id, idWithBreak(run.id))),
          ),
          h('td', { class: 'id runs-col-id' }, runLink(run.id)),
          h('td', null, stateBadge(run.state)),
          h(
            'td',
            { class: 'run-nodes' },
            `${run.node_done} / ${run.node_total}`,
            run.node_failed ? h('span', { class: 'error-text' }, ` (${run.node_failed})`) : '',
          ),
          h('td', { class: 'runs-col-started' }, timeEl(run.created_at, { compact: true })),
          h('td', { class: 'runs-col-duration num' }, runDuration(run)),
          h('td', { class: 'runs-col-updated' }, timeEl(run.updated_at, { compact: true })),
        ),
      ),
    ),
  );
}

// How long a run took (created to its last change once it ended), or has been running so far.
function runDuration(run) {
  if (run.state === 'RUNNING')
    return h('span', { class: 'muted' }, `${durationWords(Date.now() - run.created_at)} so far`);
  return fmtDuration(run.updated_at - run.created_at);
}

function idWithBreak(id) {
  const colon = id.indexOf(':');
  return colon < 0 ? id : [id.slice(0, colon + 1), h('wbr'), id.slice(colon + 1)];
}

// A real link (#/runs/<id>) so it can be copied or opened in a new tab; a plain click opens the detail here.
function runLink(id, text = id) {
  return h(
    'a',
    {
      href: `#/runs/${enc(id)}`,
      class: 'run-link',
      onclick: (event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        openRun(id);
      },
    },
    text,
  );
}

// The New run form (as the original's): flow, input JSON, an optional run id (the part after "<flow>:").
function openNewRun(flows) {
  const preset = app.runs.flow && flows.includes(app.runs.flow) ? app.runs.flow : flows[0];
  const form = h(
    'form',
    { class: 'grid', id: 'new-run' },
    'Flow',
    h(
      'select',
      { name: 'flow', required: true },
      flows.map((f) => option(f, f, f === preset)),
    ),
    'Input (JSON)',
    h('textarea', { name: 'input' }, '{}'),
    'Run ID',
    h('input', { name: 'id', placeholder: 'optional: the part after "<flow>:"' }),
    h('span'),
    h('button', { type: 'submit', class: 'primary', 'data-needs': 'operator' }, 'Start'),
  );
  const error = h('p', { class: 'error-text', id: 'new-run-error' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submitNewRun(form, error);
  });
  openModal(`#/${app.tab}`, null);
  modalContent(h('h2', null, 'New run'), form, error);
}

async function submitNewRun(form, error) {
  const data = new FormData(form);
  const body = { flow: String(data.get('flow')) };
  try {
    body.input = JSON.parse(String(data.get('input') || 'null'));
  } catch {
    error.textContent = 'Input must be valid JSON';
    return;
  }
  if (data.get('id')) body.id = String(data.get('id'));
  let answer;
  try {
    answer = await apiCall(API.runs, { method: 'POST', body });
  } catch (e) {
    error.textContent = e.message; // the server's validation message, verbatim
    return;
  }
  setStatus(`Run started: ${answer.id}`);
  refreshNow();
  openRun(answer.id);
}
