// The runs tab (flows): list, detail with its nodes as a table, retry and cancel. Shown only when flows exist.

const RUN_STATES = ['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED'];

async function loadRuns(isCurrent) {
  const view = app.runs;
  const [data, flows] = await Promise.all([
    apiCall(withQuery(API.runs, { flow: view.flow, state: view.state, limit: 20, offset: view.page * 20 })),
    apiCall(API.flows).catch(() => ({ flows: [] })),
  ]);
  if (!isCurrent()) return;
  const pages = Math.max(1, Math.ceil((data.total || 0) / 20));
  const filter = (key) => (e) => { view[key] = e.target.value; view.page = 0; refreshNow(); };
  replace($('#view'), h('div', { class: 'toolbar' },
    h('select', { 'aria-label': 'Flow', onchange: filter('flow') }, option('', 'All flows'), (flows.flows || []).map((f) => option(f, f, f === view.flow))),
    h('select', { 'aria-label': 'Status', onchange: filter('state') }, option('', 'All states'), RUN_STATES.map((s) => option(s, s, s === view.state)))),
  renderRunsTable(data.runs || []),
  h('div', { class: 'pager' }, `${data.total || 0} runs`, `Page ${view.page + 1} of ${pages}`,
    h('button', { type: 'button', disabled: view.page === 0, onclick: () => { view.page -= 1; refreshNow(); } }, 'Previous'),
    h('button', { type: 'button', disabled: view.page >= pages - 1, onclick: () => { view.page += 1; refreshNow(); } }, 'Next')));
}

function renderRunsTable(runs) {
  if (!runs.length) return h('p', { class: 'empty' }, 'No runs.');
  return h('table', null, h('thead', null, h('tr', null, ['Flow', 'ID', 'Status', 'Nodes', 'Updated at'].map((t) => h('th', null, t)))),
    h('tbody', null, runs.map((run) => h('tr', null, h('td', null, run.flow),
      h('td', { class: 'id' }, h('button', { type: 'button', class: 'link', onclick: () => openRun(run.id) }, run.id)),
      h('td', null, stateBadge(run.state)),
      h('td', null, `${run.node_done} / ${run.node_total}`, run.node_failed ? h('span', { class: 'error-text' }, ` (${run.node_failed})`) : ''),
      h('td', null, fmtTime(run.updated_at))))));
}

function openRun(id) {
  return openModal(`#/runs/${enc(id)}`, () => loadRunDetail(id));
}

async function loadRunDetail(id) {
  let data;
  try {
    data = await apiCall(API.run(id));
  } catch (error) {
    modalContent(h('h2', null, id), h('p', { class: 'error-text' }, `Failed to load: ${error.message}`));
    return;
  }
  if (!app.modal || app.modal.route !== `#/runs/${enc(id)}`) return;
  const run = data.run;
  const after = () => { refreshModal(); refreshNow(); };
  modalContent(h('h2', null, 'Run ', stateBadge(run.state)),
    fieldList([['ID', run.id], ['Flow', run.flow], ['Nodes', `${run.node_done} / ${run.node_total} (${run.node_failed} failed)`],
      ['Parent run', run.parent_run_id ? h('button', { type: 'button', class: 'link', onclick: () => openRun(run.parent_run_id) }, run.parent_run_id) : '\u2014'],
      ['Created at', fmtTime(run.created_at)], ['Updated at', fmtTime(run.updated_at)]]),
    h('div', { class: 'actions' },
      h('button', { type: 'button', disabled: run.state !== 'FAILED', title: 'Only failed runs can be resumed', onclick: () => mutateRun(API.runRetry(id), after) }, 'Retry'),
      h('button', { type: 'button', class: 'danger', disabled: run.state !== 'RUNNING', title: 'Running jobs are not stopped, only pending nodes', onclick: () => mutateRun(API.runCancel(id), after) }, 'Cancel')),
    h('h3', null, 'Nodes'), renderNodes(data.nodes || []),
    h('h3', null, 'Input'), h('pre', null, prettyJson(run.input)));
}

function renderNodes(nodes) {
  if (!nodes.length) return h('p', { class: 'empty' }, 'No nodes.');
  return h('table', null, h('thead', null, h('tr', null, ['Node', 'Binding', 'Status', 'After', 'Job / run', 'Error'].map((t) => h('th', null, t)))),
    h('tbody', null, nodes.map((node) => h('tr', null, h('td', { class: 'id' }, node.id), h('td', null, node.binding || '\u2014'),
      h('td', null, stateBadge(node.state)), h('td', null, (node.after || []).join(', ')),
      h('td', null, node.job_id ? h('button', { type: 'button', class: 'link', onclick: () => openJob(node.job_id) }, 'job') : null,
        node.child_run_id ? h('button', { type: 'button', class: 'link', onclick: () => openRun(node.child_run_id) }, 'run') : null),
      h('td', { class: 'error-text' }, node.error || '')))));
}

async function mutateRun(path, after) {
  try {
    await apiCall(path, { method: 'POST' });
    setStatus('Run updated');
  } catch (error) {
    setStatus(`Refused: ${error.message}`, true);
  }
  after();
}
