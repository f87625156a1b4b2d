'use strict';
// Shared pieces of the dashboard: configuration, DOM building, formatting, the status line.
// Every file of assets/js is concatenated into the page's one inline script element, in the order dashboard/page.py lists.

// Injected by render_dashboard() right after <head>; the defaults apply when the file is opened directly.
const CONFIG = Object.assign({ tokenCookie: null }, window.__TSUMUGI__ || {});
const STATES = ['SCHEDULED', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'STALLED'];
const ACTIVE_STATES = ['SCHEDULED', 'QUEUED', 'RUNNING'];

const $ = (selector, root = document) => root.querySelector(selector);

// Builds an element. Text always goes through text nodes, never innerHTML, so data cannot inject markup.
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  appendChildren(el, children);
  return el;
}

function appendChildren(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function replace(el, ...children) {
  el.replaceChildren();
  appendChildren(el, children);
}

function option(value, label, selected) {
  return h('option', { value, selected: selected === true || undefined }, label);
}

// Browser locale, as the brief asks; an em dash marks "never".
function fmtTime(ms) {
  return ms === null || ms === undefined ? '\u2014' : new Date(ms).toLocaleString();
}

function fmtDuration(ms) {
  if (ms === null || ms === undefined || !(ms >= 0)) return '\u2014';
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}

function stateBadge(state) {
  return h('span', { class: `badge st-${String(state).toLowerCase()}` }, state);
}

function prettyJson(text) {
  if (text === null || text === undefined) return 'null';
  try {
    return JSON.stringify(typeof text === 'string' ? JSON.parse(text) : text, null, 2);
  } catch {
    return String(text);
  }
}

// Local-time day bounds, as the original: from = 00:00:00.000, to = 23:59:59.999 of the chosen day.
function dayStart(isoDate) {
  return isoDate ? new Date(`${isoDate}T00:00:00.000`).getTime() : null;
}

function dayEnd(isoDate) {
  return isoDate ? new Date(`${isoDate}T23:59:59.999`).getTime() : null;
}

function setStatus(message, isError = false) {
  const el = $('#status');
  el.textContent = message || '';
  el.classList.toggle('error', Boolean(isError));
}

function fieldList(pairs) {
  return h('dl', { class: 'fields' }, pairs.map(([label, value]) => [h('dt', null, label), h('dd', null, value)]));
}

function readStored(key, fallback) {
  try {
    const value = localStorage.getItem(key);
    return value === null ? fallback : JSON.parse(value);
  } catch {
    return fallback; // corrupt or unavailable storage: defaults
  }
}

function writeStored(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // private mode or quota: the setting just does not persist
  }
}
