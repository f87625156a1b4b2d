/* global $, API, NODE_STATES, NODE_TERMINAL, apiCall, app, childrenByParent, enc, fieldList, fmtDuration,
   fmtTime, h, modalContent, nodeSpans, openJob, openModal, prettyJson, refreshModal, refreshNow, renderDag,
   renderExplanation, renderWaterfall, replace, runLink, setStatus, stateBadge */
/* exported openRun */

// A run's detail (GET /api/runs/{id}) in the modal: fields, retry / cancel behind a confirmation, the output,
// the waterfall, the DAG picture and the selected node's detail (its job, its child run, why it is not running).
// What the user opened, selected or is confirming lives in runView, so the auto-refresh keeps it.

const runView = { id: null, data: null, expanded: new Set(), selected: null, confirm: null, dag: {} };

const RUN_ACTIONS = {
  retry: {
    label: 'Retry',
    confirm: 'Resume run',
    keep: 'Keep as is',
    path: (id) => API.runRetry(id),
    done: 'Run resumed',
    question:
      'Resume this run? Completed nodes keep their results; failed, stalled, skipped and cancelled nodes run again.',
  },
  cancel: {
    label: 'Cancel',
    confirm: 'Cancel run',
    keep: 'Keep running',
    path: (id) => API.runCancel(id),
    done: 'Run cancelled',
    question: 'Cancel this run? Nodes not started yet will not start; jobs already running finish.',
  },
};

function runRoute(id) {
  return `#/runs/${enc(id)}`;
}

function openRun(id) {
  if (runView.id !== id)
    Object.assign(runView, { id, data: null, expanded: new Set(), selected: null, confirm: null, dag: {} });
  return openModal(runRoute(id), () => loadRunDetail(id));
}

function isRunOpen(id) {
  return Boolean(app.modal && app.modal.route === runRoute(id) && runView.id === id);
}

async function loadRunDetail(id) {
  let data;
  try {
    data = await apiCall(API.run(id));
  } catch (error) {
    if (isRunOpen(id))
      modalContent(h('h2', null, id), h('p', { class: 'error-text' }, `Failed to load: ${error.message}`));
    return;
  }
  if (!isRunOpen(id)) return; // closed or replaced meanwhile
  runView.data = data;
  renderRunDetail();
}

function renderRunDetail() {
  const { run, nodes = [] } = runView.data;
  const redraw = () => renderRunDetail();
  const ui = {
    expanded: runView.expanded,
    selected: runView.selected,
    view: runView.dag,
    onToggle: (nodeId) => {
      if (!runView.expanded.delete(nodeId)) runView.expanded.add(nodeId);
      redraw();
    },
    onSelect: (nodeId) => {
      runView.selected = runView.selected === nodeId ? null : nodeId;
      redraw();
      scrollToNode();
    },
  };
  const selected = nodes.find((n) => n.id === runView.selected) || null;
  const focused = focusKey(document.activeElement);
  modalContent(
    h(
      'div',
      { class: 'run-detail', id: 'run-detail', 'data-id': run.id },
      h('h2', null, 'Run ', stateBadge(run.state)),
      run.failure
        ? h('p', { class: 'error-text', id: 'run-failure', role: 'status' }, `Why it failed: ${run.failure}`)
        : null,
      fieldList([
        ['ID', run.id],
        ['Flow', run.flow],
        ['Nodes', `${run.node_done} / ${run.node_total} (${run.node_failed} failed)`],
        [
          'Parent run',
          run.parent_run_id
            ? h(
                'span',
                { id: 'run-parent' },
                runLink(run.parent_run_id),
                run.parent_node_id ? ` (node ${run.parent_node_id})` : '',
              )
            : '\u2014',
        ],
        ['Created at', fmtTime(run.created_at)],
        ['Updated at', fmtTime(run.updated_at)],
      ]),
      runActions(run),
      run.output !== undefined && run.output !== null
        ? [h('h3', null, 'Output'), h('pre', { id: 'run-output' }, prettyJson(run.output))]
        : null,
      h('h3', null, 'Waterfall'),
      renderWaterfall(nodes, Date.now(), ui),
      selected
        ? renderNodeDetail(run, nodes, selected)
        : h('p', { class: 'muted hint' }, 'Select a node for its detail.'),
      h('h3', null, 'Graph'),
      renderDag(nodes, ui),
      h('h3', null, 'Input'),
      h('pre', { id: 'run-input' }, prettyJson(run.input)),
    ),
  );
  const again = focused && $(focused, $('#modal-body'));
  if (again) again.focus({ preventScroll: true });
}

// Redraws (auto-refresh, a toggle) replace the elements: the focused control is found again by its node and
// its class, so keyboard users keep their place.
function focusKey(el) {
  if (!el || el === document.body || !$('#modal-body').contains(el)) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  const holder = el.closest('.wf-row[data-node], .dag-node[data-node]');
  if (!holder) return null;
  const scope = `${holder.classList.contains('dag-node') ? '.dag-node' : '.wf-row'}[data-node="${CSS.escape(holder.dataset.node)}"]`;
  if (el === holder) return scope;
  const mark = [...el.classList].find((c) => /^(wf-name|wf-toggle|run-link)$/.test(c));
  return mark ? `${scope} .${mark}` : null;
}

function scrollToNode() {
  const panel = $('#node-detail');
  if (panel && panel.scrollIntoView) panel.scrollIntoView({ block: 'nearest' });
}

function runActions(run) {
  const enabled = {
    retry: run.state === 'FAILED' && run.retryable !== false,
    cancel: run.state === 'RUNNING',
  };
  const why = {
    retry: 'Only failed runs can be resumed',
    cancel: 'Running jobs are not stopped, only pending nodes',
  };
  const buttons = Object.entries(RUN_ACTIONS).map(([name, action]) =>
    h(
      'button',
      {
        type: 'button',
        id: `run-${name}`,
        'data-needs': 'operator',
        class: name === 'cancel' ? 'danger' : null,
        disabled: !enabled[name],
        title: why[name],
        onclick: () => {
          runView.confirm = name;
          renderRunDetail();
        },
      },
      action.label,
    ),
  );
  const pending = runView.confirm && enabled[runView.confirm] ? RUN_ACTIONS[runView.confirm] : null;
  return h(
    'div',
    null,
    h('div', { class: 'actions' }, buttons),
    pending
      ? h(
          'div',
          { class: 'confirm', id: 'run-confirm', role: 'alertdialog', 'aria-label': pending.confirm },
          h('p', null, pending.question),
          h(
            'div',
            { class: 'actions' },
            h(
              'button',
              {
                type: 'button',
                id: 'run-confirm-yes',
                class: runView.confirm === 'cancel' ? 'danger' : 'primary',
                onclick: () => mutateRun(run.id, runView.confirm),
              },
              pending.confirm,
            ),
            h(
              'button',
              {
                type: 'button',
                id: 'run-confirm-no',
                onclick: () => {
                  runView.confirm = null;
                  renderRunDetail();
                },
              },
              pending.keep,
            ),
          ),
        )
      : null,
  );
}

async function mutateRun(id, name) {
  const action = RUN_ACTIONS[name];
  runView.confirm = null;
  if (isRunOpen(id)) renderRunDetail(); // the question goes at once, not when the reload answers
  try {
    await apiCall(action.path(id), { method: 'POST' });
    setStatus(action.done);
  } catch (error) {
    setStatus(`Refused: ${error.message}`, true);
  }
  refreshModal();
  refreshNow();
}

function jobLink(id) {
  return h(
    'a',
    {
      href: `#/jobs/${enc(id)}`,
      class: 'job-link',
      onclick: (event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        openJob(id);
      },
    },
    id,
  );
}

function renderNodeDetail(run, nodes, node) {
  const span = nodeSpans(nodes, Date.now()).get(node.id);
  const kids = childrenByParent(nodes).get(node.id) || [];
  const counts = NODE_STATES.map((s) => [s, kids.filter((k) => k.state === s).length]).filter(([, n]) => n);
  const pairs = [
    ['Binding', node.binding || (node.child_run_id ? 'subflow' : '\u2014')],
    ['Origin', node.origin],
  ];
  if (node.parent) pairs.push(['Parent node', node.parent]);
  pairs.push(['After', (node.after || []).length ? node.after.join(', ') : '\u2014']);
  if (node.job_id) pairs.push(['Job', jobLink(node.job_id)]);
  if (node.child_run_id) pairs.push(['Subflow run', runLink(node.child_run_id)]);
  if (kids.length) pairs.push(['Children', counts.map(([s, n]) => `${s} ${n}`).join(' / ')]);
  if (span && span.start !== null) {
    pairs.push(
      ['Started', fmtTime(span.start)],
      ['Finished', NODE_TERMINAL.includes(node.state) ? fmtTime(span.end) : '\u2014'],
      ['Duration', fmtDuration(span.end - span.start)],
    );
  }
  pairs.push(['Updated at', fmtTime(node.updated_at)]);
  const why = h('div', { id: 'node-why' });
  fillWhy(run, nodes, node, why);
  return h(
    'div',
    { class: 'card node-detail', id: 'node-detail', 'data-node': node.id },
    h('h3', null, 'Node ', h('span', { class: 'mono' }, node.id), ' ', stateBadge(node.state)),
    fieldList(pairs),
    why,
    node.result !== null && node.result !== undefined
      ? [h('h4', null, 'Result'), h('pre', { id: 'node-result' }, prettyJson(node.result))]
      : null,
    node.error
      ? [h('h4', null, 'Error'), h('pre', { class: 'error-text', id: 'node-error' }, node.error)]
      : null,
  );
}

// "Why is this node not running": for a PENDING node, the dependencies it waits on (the API's waiting_on;
// derived from `after` when an older API lacks it), or that the run has ended; for a SCHEDULED or QUEUED
// node, its job's own explanation (GET /api/jobs/{id}/explain).
function fillWhy(run, nodes, node, target) {
  const heading = h('h4', null, 'Why is it not running?');
  if (node.state === 'PENDING') {
    replace(target, heading, h('p', null, pendingReason(run, nodes, node)));
  } else if ((node.state === 'SCHEDULED' || node.state === 'QUEUED') && node.job_id) {
    loadNodeExplain(node.job_id, target, heading);
  }
}

function pendingReason(run, nodes, node) {
  if (run.state !== 'RUNNING') {
    return `The run is ${run.state}: this node will not start${run.state === 'FAILED' ? ' unless the run is resumed' : ''}.`;
  }
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const ids = Array.isArray(node.waiting_on)
    ? node.waiting_on
    : (node.after || []).filter((id) => byId.has(id) && !NODE_TERMINAL.includes(byId.get(id).state));
  if (!ids.length) return 'Its dependencies have settled: it starts at the run\u2019s next step.';
  const children = childrenByParent(nodes);
  const describe = (id) => {
    const dep = byId.get(id);
    if (!dep) return id;
    const kids = children.get(id) || [];
    const settled = kids.filter((k) => NODE_TERMINAL.includes(k.state)).length;
    return `${id} (${dep.state}${kids.length ? `, ${settled} of ${kids.length} children settled` : ''})`;
  };
  return `Waiting on ${ids.map(describe).join(', ')}.`;
}

async function loadNodeExplain(jobId, target, heading) {
  let answer;
  try {
    answer = await apiCall(API.jobExplain(jobId));
  } catch {
    return; // an older scheduler cannot explain: the section stays empty
  }
  if (target.isConnected) replace(target, heading, renderExplanation(answer));
}

// A pasted or typed #/runs/<id> opens that run (page loads are routed by app.js). Only while app.js has no
// router of its own (applyRoute): once it has, it routes every hash and this listener stands aside.
window.addEventListener('hashchange', () => {
  if (typeof applyRoute === 'function') return;
  const match = location.hash.match(/^#\/runs\/(.+)$/);
  if (!match || (app.modal && app.modal.route === location.hash)) return;
  try {
    openRun(decodeURIComponent(match[1]));
  } catch {
    // a malformed escape opens nothing
  }
});
