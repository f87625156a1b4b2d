/* global $, API, apiCall, closeModal, enc, endpointAvailable, freshJobsView, h, hideModal, loadBindings,
   loadJobs, loadMetrics, loadRuns, loadSchedules, openJob, openRun, option, readStored, refreshModal,
   replace, setStatus, withQuery, writeStored */
/* exported app, refreshNow, start, stopRefresh */

// The shell: tabs and feature detection, the auto-refresh loop, hash routes (#/jobs/<id> opens a job).
// The hash is the route both ways: opening a job or a tab writes it (a history entry, so Back works), and a
// hash changed from outside (typed, a link, Back/Forward) opens what it names.

const REFRESH_CHOICES = [
  ['Off', 0],
  ['1s', 1000],
  ['3s', 3000],
  ['10s', 10000],
  ['30s', 30000],
  ['1m', 60000],
];
const LOADERS = {
  jobs: loadJobs,
  runs: loadRuns,
  schedules: loadSchedules,
  metrics: loadMetrics,
  bindings: loadBindings,
};

const app = {
  tab: 'jobs',
  tabs: ['jobs', 'bindings'],
  generation: 0,
  timer: null,
  paused: false,
  refreshMs: storedRefresh(),
  modal: null,
  modalPushed: false,
  explained: null,
  policyResults: {},
  jobs: freshJobsView(),
  runs: { flow: '', state: '', page: 0 },
  metrics: { hours: 24, binding: '' },
};

// Unknown or empty stored values mean the default 3 s, which matches the read model's lag; 0 means off.
function storedRefresh() {
  const value = readStored('tsumugi:refresh', 3000);
  return REFRESH_CHOICES.some(([, ms]) => ms === value) ? value : 3000;
}

async function detectFeatures() {
  const [flows, schedules, metrics, catalog] = await Promise.all([
    apiCall(API.flows)
      .then((d) => (d.flows || []).length > 0)
      .catch(() => false),
    endpointAvailable(API.schedules),
    endpointAvailable(withQuery(API.metrics, { hours: 24 })),
    apiCall(API.bindings).catch(() => null), // the notice bindings, so the first job list can hide them
  ]);
  if (catalog) Object.assign(app.jobs, { bindings: catalog.bindings || [], notices: catalog.notices || [] });
  app.tabs = ['jobs', flows && 'runs', schedules && 'schedules', metrics && 'metrics', 'bindings'].filter(
    Boolean,
  );
  if (!app.tabs.includes(app.tab)) app.tab = 'jobs';
  renderTabs();
}

function renderTabs() {
  const nav = $('#tabs');
  nav.hidden = app.tabs.length < 2;
  replace(
    nav,
    app.tabs.map((tab) =>
      h(
        'button',
        {
          type: 'button',
          class: tab === app.tab ? 'active' : null,
          'data-tab': tab,
          onclick: () => switchTab(tab),
        },
        tab,
      ),
    ),
  );
}

// A click on a tab: a new history entry, then the route applies it.
function switchTab(tab) {
  if (location.hash === `#/${tab}` && !app.modal) return;
  history.pushState(null, '', `#/${tab}`);
  applyRoute();
}

function selectTab(tab) {
  // A new tab starts from clean filters and the first page, as in the original.
  app.tab = tab;
  const { gone, hideNotices, bindings, notices } = app.jobs;
  app.jobs = Object.assign(freshJobsView(), { gone, hideNotices, bindings, notices });
  app.runs = { flow: '', state: '', page: 0 };
  renderTabs();
  replace($('#view'));
  refreshNow();
}

// Loads the current tab. Answers that arrive after a newer load started, or for another tab, are dropped.
async function refreshNow() {
  const generation = ++app.generation;
  const tab = app.tab;
  const isCurrent = () => generation === app.generation && tab === app.tab;
  try {
    await Promise.all([LOADERS[tab](isCurrent), refreshModal()]);
    if (
      isCurrent() &&
      $('#status').classList.contains('error') &&
      /^Failed to load/.test($('#status').textContent)
    )
      setStatus('');
  } catch (error) {
    if (isCurrent() && error.status !== 401) setStatus(`Failed to load: ${error.message}`, true);
  }
  scheduleRefresh();
}

function scheduleRefresh() {
  clearTimeout(app.timer);
  if (!app.refreshMs || app.paused || !$('#auth').hidden) return;
  app.timer = setTimeout(() => {
    if (!document.hidden) refreshNow();
    else scheduleRefresh();
  }, app.refreshMs);
}

function stopRefresh() {
  clearTimeout(app.timer);
}

function setupRefreshControls() {
  const select = $('#refresh-interval');
  replace(
    select,
    REFRESH_CHOICES.map(([label, ms]) => option(String(ms), label, ms === app.refreshMs)),
  );
  select.addEventListener('change', () => {
    app.refreshMs = Number(select.value);
    writeStored('tsumugi:refresh', app.refreshMs);
    scheduleRefresh();
  });
  const pause = $('#refresh-pause');
  pause.addEventListener('click', () => {
    app.paused = !app.paused;
    pause.textContent = app.paused ? 'Resume' : 'Pause';
    scheduleRefresh();
  });
  $('#refresh-now').addEventListener('click', () => refreshNow());
}

// "#/jobs/<percent-encoded id>" and "#/runs/<id>" open a detail; "#/<tab>" selects a tab.
function parseHash() {
  const [, tab, encodedId] = location.hash.match(/^#\/([a-z]+)(?:\/(.+))?$/) || [];
  let id = null;
  try {
    id = encodedId ? decodeURIComponent(encodedId) : null;
  } catch {
    id = null; // a malformed escape opens nothing
  }
  return { tab, id };
}

// Makes the page show what the hash names; idempotent, so hashchange and popstate may both call it.
function applyRoute() {
  const { tab, id } = parseHash();
  if (id && (tab === 'jobs' || tab === 'runs')) {
    const route = `#/${tab}/${enc(id)}`;
    if (!app.modal || app.modal.route !== route) {
      app.modalPushed = false; // came from the address: closing must not go back past it
      if (tab === 'jobs') openJob(id);
      else openRun(id);
    }
    return;
  }
  if (app.modal) hideModal();
  if (tab && app.tabs.includes(tab) && tab !== app.tab) selectTab(tab);
}

function routeFromHash() {
  const { tab, id } = parseHash();
  if (tab && app.tabs.includes(tab)) app.tab = tab;
  if (id && tab === 'jobs') openJob(id);
  if (id && tab === 'runs') openRun(id);
}

async function start() {
  try {
    await detectFeatures();
  } catch (error) {
    setStatus(`Failed to load: ${error.message}`, true);
  }
  routeFromHash();
  renderTabs();
  refreshNow();
}

window.addEventListener('hashchange', applyRoute);
window.addEventListener('popstate', applyRoute);
$('#modal-close').addEventListener('click', closeModal);
$('#modal').addEventListener('click', (event) => {
  if (event.target === $('#modal')) closeModal();
});
// Escape closes the detail, unless a confirmation is open over it (Escape answers that one).
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && app.modal && !$('#confirm').open) closeModal();
});
setupRefreshControls();
start();
