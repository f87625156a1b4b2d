// The REST API under /api (same origin). Every path the dashboard calls is written out here, once, so a
// unit test can compare them with the routes the scheduler serves.

// encodeURIComponent turns a job id's '#' into %23 (else the browser would cut the URL there) and ':' into %3A.
const enc = encodeURIComponent;

const API = {
  jobs: '/api/jobs',
  job: (id) => `/api/jobs/${enc(id)}`,
  jobRetry: (id) => `/api/jobs/${enc(id)}/retry`,
  jobCancel: (id) => `/api/jobs/${enc(id)}/cancel`,
  jobReschedule: (id) => `/api/jobs/${enc(id)}/reschedule`,
  jobExplain: (id) => `/api/jobs/${enc(id)}/explain`,
  bulkRetry: '/api/jobs/bulk-retry',
  bulkCancel: '/api/jobs/bulk-cancel',
  bindings: '/api/bindings',
  policy: (binding) => `/api/bindings/${enc(binding)}/policy`,
  policyReset: (binding) => `/api/bindings/${enc(binding)}/policy/reset`,
  stats: '/api/stats',
  diagnostics: '/api/diagnostics',
  metrics: '/api/metrics',
  schedules: '/api/schedules',
  schedule: (name) => `/api/schedules/${enc(name)}`,
  schedulePause: (name) => `/api/schedules/${enc(name)}/pause`,
  scheduleResume: (name) => `/api/schedules/${enc(name)}/resume`,
  scheduleTrigger: (name) => `/api/schedules/${enc(name)}/trigger`,
  flows: '/api/flows',
  runs: '/api/runs',
  run: (id) => `/api/runs/${enc(id)}`,
  runRetry: (id) => `/api/runs/${enc(id)}/retry`,
  runCancel: (id) => `/api/runs/${enc(id)}/cancel`,
};

class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

// One request. A 401 anywhere shows the sign-in screen; other failures throw ApiError with the server's text.
async function apiCall(path, { method = 'GET', body } = {}) {
  const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null; // plain-text answers (e.g. 404 "not found") keep their text as the message
  }
  if (response.status === 401) showSignIn();
  if (!response.ok) {
    const message = (data && data.error) || text || `HTTP ${response.status}`;
    throw new ApiError(response.status, message, data);
  }
  return data;
}

// Feature probe: a tab exists unless its endpoint says "not configured" (501) or the caller is not signed in.
async function endpointAvailable(path) {
  try {
    await apiCall(path);
    return true;
  } catch (error) {
    return !(error instanceof ApiError && (error.status === 501 || error.status === 401));
  }
}
