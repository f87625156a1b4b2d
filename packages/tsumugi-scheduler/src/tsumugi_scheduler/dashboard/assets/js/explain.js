/* global API, apiCall, app, fmtRelative, fmtTime, h, openJob, prettyJson, replace */
/* exported loadExplain, plural, renderExplanation */

// "Why is it not running?": GET /api/jobs/{id}/explain rendered in words from its structured fields, times
// relative to the server's instant ("ready in 4 min 12 s"), holders as links. The server's own sentence
// (`message`) is the fallback for kinds this page does not know.

async function loadExplain(id, target) {
  let answer;
  try {
    answer = await apiCall(API.jobExplain(id));
  } catch (error) {
    // 404/501: the server cannot explain (older scheduler); the section stays hidden.
    if (error.status !== 404 && error.status !== 501)
      replace(target, h('p', { class: 'error-text' }, `Explain failed: ${error.message}`));
    return;
  }
  const view = [h('h3', null, 'Why is it not running?'), renderExplanation(answer)];
  app.explained = { id, view };
  replace(target, view);
}

function renderExplanation(wrapped) {
  const answer = wrapped && wrapped.explain ? wrapped.explain : wrapped;
  const blockers = answer && Array.isArray(answer.blockers) ? answer.blockers : null;
  if (!blockers) return h('pre', null, prettyJson(answer));
  if (!answer.waiting) return h('p', null, answer.summary || `The job is ${answer.state}.`);
  if (!blockers.length) return h('p', null, 'Nothing holds it back: the next dispatch starts it.');
  const now = answer.now || Date.now();
  const ahead =
    answer.jobs_ahead && !blockers.some((b) => b.kind === 'priority')
      ? h('p', { class: 'muted' }, `${plural(answer.jobs_ahead, 'ready job')} ahead of it.`)
      : null;
  return h(
    'div',
    null,
    h(
      'ul',
      { class: 'explain' },
      blockers.map((b) => h('li', { 'data-kind': b.kind }, describeBlocker(b, now))),
    ),
    ahead,
  );
}

function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function clearsAt(at, now) {
  return [h('strong', null, fmtRelative(at, now)), h('span', { class: 'muted' }, ` (${fmtTime(at)})`)];
}

function jobLinks(ids) {
  return ids.map((id, i) => [
    i ? ', ' : '',
    h('button', { type: 'button', class: 'link mono', onclick: () => openJob(id) }, id),
  ]);
}

function describeBlocker(b, now) {
  const key = b.key ? h('code', null, b.key) : null;
  switch (b.kind) {
    case 'run_after':
      return ['Not due yet: ready ', clearsAt(b.clears_at, now), '.'];
    case 'paused':
      return ['Its binding is paused: it starts once dispatch is resumed (bindings tab).'];
    case 'concurrency':
      return [
        `The binding is full: ${plural(b.count, 'job')} in flight`,
        b.limit !== undefined && b.limit !== null ? ` of ${b.limit} allowed` : '',
        '.',
      ];
    case 'rate':
      return ['The binding\u2019s rate limit is spent: next token ', clearsAt(b.clears_at, now), '.'];
    case 'per_key_concurrency': {
      const holders = b.holders || [];
      const more = b.count > holders.length ? ` and ${b.count - holders.length} more` : '';
      return [
        `Waits for ${holders.length === 1 && !more ? 'job' : 'jobs'} `,
        jobLinks(holders),
        more,
        key ? [' of key ', key] : '',
        b.limit ? ` (at most ${b.limit} at a time per key)` : '',
        '.',
      ];
    }
    case 'per_key_rate':
      return ['The rate limit of key ', key, ' is spent: next token ', clearsAt(b.clears_at, now), '.'];
    case 'priority':
      return [`${plural(b.count, 'ready job')} with a higher priority go${b.count === 1 ? 'es' : ''} first.`];
    default:
      return [b.message || b.kind];
  }
}
