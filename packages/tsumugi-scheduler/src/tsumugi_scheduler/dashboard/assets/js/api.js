/* global $, noteIdentity, showSignIn, start */
/* exported API, ApiError, apiCall, enc, endpointAvailable, keepPageKey, sessionCall, sessionLost,
   whenSignedIn, withQuery */

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
  session: '/api/session',
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

// Sign-in gate (ADR-0064). The credential is an HttpOnly session cookie the server sets at sign-in: no script
// (this page's or any other) can read it, and no token is kept in document.cookie or localStorage. Before the
// first call the page asks GET /api/session, which always answers 200, so nothing answers 401 before sign-in;
// until the user has signed in every call waits here.
let sessionGate = null;

// The session's page key (ADR-0121): the sign-in answer carries it, and every call sends it with the cookie.
// Browsers send the cookie to every port of this host; the key stays in this origin's storage, which a page on
// another port cannot read, so the cookie alone is worth nothing to such a page.
const PAGE_KEY_HEADER = 'x-tsumugi-session';
const PAGE_KEY_ITEM = 'tsumugi.pageKey';
let memoryPageKey = null;

function pageKey() {
  try {
    return window.localStorage.getItem(PAGE_KEY_ITEM);
  } catch {
    return null; // storage disabled: the page signs in again after a reload
  }
}

function keepPageKey(key) {
  try {
    if (key) window.localStorage.setItem(PAGE_KEY_ITEM, key);
    else window.localStorage.removeItem(PAGE_KEY_ITEM);
  } catch {
    // storage disabled: the key lives as long as this page
  }
  memoryPageKey = key || null;
}

function whenSignedIn() {
  if (!sessionGate) {
    sessionGate = probeSession().catch((error) => {
      sessionGate = null; // a failed probe (network, 5xx) is asked again by the next call
      throw error;
    });
  }
  return sessionGate;
}

async function probeSession() {
  const answer = await send(API.session, 'GET');
  if (answer.response.ok && answer.data) noteIdentity(answer.data);
  if (answer.response.ok && answer.data && answer.data.signedIn) return;
  // A server without /api/session (a stand-in API): go on; a 401 from a real call still asks for the token.
  if (answer.response.status === 404) return;
  await new Promise((resolve) => showSignIn(resolve));
}

// The session ended (expired, token rotated, signed out elsewhere): ask again; calls wait for the new sign-in.
function sessionLost() {
  if (!$('#auth').hidden) return;
  sessionGate = new Promise((resolve) =>
    showSignIn(() => {
      resolve();
      start(); // the views that failed with 401 load again
    }),
  );
}

async function send(path, method, body) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  const key = memoryPageKey || pageKey();
  if (key) init.headers[PAGE_KEY_HEADER] = key;
  // Every state change is declared JSON, body or not: the server refuses others from a signed-in browser (415).
  if (method !== 'GET' && method !== 'HEAD') init.headers['content-type'] = 'application/json';
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    // fetch rejects only when no answer came at all ("Failed to fetch"): say so in words (issue 26).
    throw new ApiError(
      0,
      `the server at ${location.host} did not answer: is tsumugi dev (or the scheduler Worker) running? The page retries on its next refresh`,
    );
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null; // plain-text answers (e.g. 404 "not found") keep their text as the message
  }
  return { response, text, data };
}

function failure({ response, text, data }) {
  const message = (data && data.error) || text || `HTTP ${response.status}`;
  return new ApiError(response.status, message, data);
}

// One request, once signed in. A 401 asks for the token again; other failures throw ApiError with the server's text.
/**
 * @param {string} path
 * @param {{ method?: string, body?: unknown }} [options]
 */
async function apiCall(path, { method = 'GET', body } = {}) {
  await whenSignedIn();
  const answer = await send(path, method, body);
  if (answer.response.status === 401) sessionLost();
  if (!answer.response.ok) throw failure(answer);
  return answer.data;
}

// Sign-in and sign-out themselves (auth.js): answers come back as they are, without the gate.
async function sessionCall(method, body) {
  const answer = await send(API.session, method, body);
  if (!answer.response.ok) throw failure(answer);
  return answer.data;
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
