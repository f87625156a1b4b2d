// The shell: tabs and feature detection, the auto-refresh loop, hash routes (#/jobs/<id> opens a job).

const REFRESH_CHOICES = [['Off', 0], ['1s', 1000], ['3s', 3000], ['10s', 10000], ['30s', 30000], ['1m', 60000]];
const LOADERS = { jobs: loadJobs, runs: loadRuns, schedules: loadSchedules, metrics: loadMetrics, bindings: loadBindings };

const app = {
  tab: 'jobs', tabs: ['jobs', 'bindings'], generation: 0, timer: null, paused: false,
  refreshMs: storedRefresh(), modal: null,
  jobs: freshJobsView(), runs: { flow: '', state: '', page: 0 }, metrics: { hours: 24, binding: '' },
};

// Unknown or empty stored values mean the default 3 s, which matches the read model's lag; 0 means off.
function storedRefresh() {
  const value = readStored('tsumugi:refresh', 3000);
  return REFRESH_CHOICES.some(([, ms]) => ms === value) ? value : 3000;
}

async function detectFeatures() {
  const [flows, schedules, metrics] = await Promise.all([
    apiCall(API.flows).then((d) => (d.flows || []).length > 0).catch(() => false),
    endpointAvailable(API.schedules),
    endpointAvailable(withQuery(API.metrics, { hours: 24 })),
  ]);
  app.tabs = ['jobs', flows && 'runs', schedules && 'schedules', metrics && 'metrics', 'bindings'].filter(Boolean);
  if (!app.tabs.includes(app.tab)) app.tab = 'jobs';
  renderTabs();
}

function renderTabs() {
  const nav = $('#tabs');
  nav.hidden = app.tabs.length < 2;
  replace(nav, app.tabs.map((tab) => h('button', { type: 'button', class: tab === app.tab ? 'active' : null,
    'data-tab': tab, onclick: () => switchTab(tab) }, tab)));
}

function switchTab(tab) {
  // A new tab starts from clean filters and the first page, as in the original.
  app.tab = tab;
  app.jobs = Object.assign(freshJobsView(), { gone: app.jobs.gone });
  app.runs = { flow: '', state: '', page: 0 };
  if (!app.modal) history.replaceState(null, '', `#/${tab}`);
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
    if (isCurrent() && $('#status').classList.contains('error') && /^Failed to load/.test($('#status').textContent)) setStatus('');
  } catch (error) {
    if (isCurrent() && error.status !== 401) setStatus(`Failed to load: ${error.message}`, true);
  }
  scheduleRefresh();
}

function scheduleRefresh() {
  clearTimeout(app.timer);
  if (!app.refreshMs || app.paused || !$('#auth').hidden) return;
  app.timer = setTimeout(() => { if (!document.hidden) refreshNow(); else scheduleRefresh(); }, app.refreshMs);
}

function stopRefresh() {
  clearTimeout(app.timer);
}

function setupRefreshControls() {
  const select = $('#refresh-interval');
  replace(select, REFRESH_CHOICES.map(([label, ms]) => option(String(ms), label, ms === app.refreshMs)));
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
function routeFromHash() {
  const [, tab, encodedId] = location.hash.match(/^#\/([a-z]+)(?:\/(.+))?$/) || [];
  if (tab && app.tabs.includes(tab)) app.tab = tab;
  if (encodedId && tab === 'jobs') openJob(decodeURIComponent(encodedId));
  if (encodedId && tab === 'runs') openRun(decodeURIComponent(encodedId));
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

$('#modal-close').addEventListener('click', closeModal);
$('#modal').addEventListener('click', (event) => { if (event.target === $('#modal')) closeModal(); });
document.addEventListener('keydown', (event) => { if (event.key === 'Escape' && app.modal) closeModal(); });
setupRefreshControls();
start();
