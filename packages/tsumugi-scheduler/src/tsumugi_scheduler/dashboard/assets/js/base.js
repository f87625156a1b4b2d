/* exported $, ACTIVE_STATES, CONFIG, STATES, confirmAction, dayEnd, dayStart, durationWords, fieldList,
   fmtDuration, fmtRelative, fmtTime, h, option, prettyJson, readStored, replace, setStatus, stateBadge, svg,
   timeEl, writeStored */

'use strict';
// Shared pieces of the dashboard: configuration, DOM building, formatting, the status line.
// Every file of assets/js is concatenated into the page's one inline script element, in the order dashboard/page.py lists.

// Injected by render_dashboard() right after <head>; the defaults apply when the file is opened directly.
const CONFIG = Object.assign({ tokenCookie: null }, /** @type {any} */ (window).__TSUMUGI__ || {});
const STATES = ['SCHEDULED', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'STALLED', 'SLEEPING'];
const ACTIVE_STATES = ['SCHEDULED', 'QUEUED', 'RUNNING', 'SLEEPING'];

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

// An SVG element (charts, DAG): attributes set unless null/undefined/false; on* attributes become listeners.
const SVG_NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, String(value));
  }
  appendChildren(el, children);
  return el;
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

// Durations: "350 ms", "2.5 s", then the two largest units ("4 min 12 s", "7 d"); an em dash for none.
function fmtDuration(ms) {
  if (ms === null || ms === undefined || !(ms >= 0)) return '\u2014';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${+(ms / 1000).toFixed(1)} s`; // "2.5 s", "30 s"
  return durationWords(ms);
}

/** @type {Array<[string, number]>} */
const DURATION_UNITS = [
  ['d', 86400000],
  ['h', 3600000],
  ['min', 60000],
  ['s', 1000],
];

function durationWords(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const parts = [];
  let rest = Math.round(ms);
  for (const [unit, size] of DURATION_UNITS) {
    if (rest < size && !parts.length) continue;
    const amount = Math.floor(rest / size);
    rest -= amount * size;
    if (amount) parts.push(`${amount} ${unit}`);
    if (parts.length === 2 || (parts.length && !amount)) break;
  }
  return parts.join(' ');
}

// "in 4 min 12 s", "3 min ago"; `now` may be the server's instant (explanations) or the browser's.
function fmtRelative(at, now = Date.now()) {
  if (at === null || at === undefined) return '\u2014';
  const diff = at - now;
  if (Math.abs(diff) < 1000) return 'just now';
  return diff > 0 ? `in ${durationWords(diff)}` : `${durationWords(-diff)} ago`;
}

// A time element: relative text, the absolute local time beside it (or in its tooltip when compact).
/**
 * @param {number | null | undefined} at
 * @param {{ compact?: boolean, now?: number }} [options]
 */
function timeEl(at, { compact = false, now } = {}) {
  if (at === null || at === undefined) return h('span', { class: 'muted' }, '\u2014');
  const iso = new Date(at).toISOString();
  return h(
    'time',
    { datetime: iso, title: `${fmtTime(at)} (${iso})` },
    fmtRelative(at, now),
    compact ? null : h('span', { class: 'muted' }, ` \u00b7 ${fmtTime(at)}`),
  );
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
  return h(
    'dl',
    { class: 'fields' },
    pairs.map(([label, value]) => [h('dt', null, label), h('dd', null, value)]),
  );
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

// The page's own confirmation for destructive actions (native <dialog>, so it stacks over the job detail).
// Resolves true only when the user presses the confirming button.
function confirmAction({ title, message, confirmLabel, cancelLabel = 'Keep' }) {
  const dialog = $('#confirm');
  return new Promise((resolve) => {
    const finish = (answer) => {
      dialog.close();
      resolve(answer);
    };
    replace(
      dialog,
      h(
        'form',
        { method: 'dialog', class: 'confirm-box' },
        h('h2', null, title),
        h('p', null, message),
        h(
          'div',
          { class: 'actions' },
          h(
            'button',
            { type: 'button', class: 'danger-solid', id: 'confirm-yes', onclick: () => finish(true) },
            confirmLabel,
          ),
          h('button', { type: 'button', id: 'confirm-no', onclick: () => finish(false) }, cancelLabel),
        ),
      ),
    );
    dialog.onclose = () => resolve(false); // Escape; a second resolve is ignored
    dialog.showModal();
    $('#confirm-no', dialog).focus();
  });
}
