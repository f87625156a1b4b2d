/* global fmtDuration, h, prettyJson, timeEl */
/* exported renderSteps */

// A job's durable steps (ADR-0144) in its detail: a timeline in the order they started, each with its state,
// the invocation that ran it, when it finished and its stored result (a sleep's or a wait's included).

function stepLabel(step) {
  if (step.state === 'waiting') return 'waiting';
  if (step.state === 'started') return 'outcome unknown';
  return 'done';
}

function renderSteps(job) {
  const steps = job.steps || [];
  if (!steps.length) return null;
  const items = steps.map((s) => {
    const took = s.finished_at ? s.finished_at - s.started_at : null;
    return h(
      'li',
      { class: `step-row step-${s.state}` },
      h(
        'div',
        { class: 'attempt-head' },
        h('strong', null, s.name),
        ' ',
        h('span', { class: `badge step-state step-${s.state}` }, stepLabel(s)),
        h(
          'span',
          { class: 'attempt-time' },
          `invocation #${s.attempt}, started `,
          timeEl(s.started_at),
          took !== null ? [', took ', h('strong', null, fmtDuration(took))] : null,
        ),
      ),
      s.result !== null && s.result !== undefined
        ? h('pre', { class: 'code step-result' }, prettyJson(JSON.stringify(s.result)))
        : null,
    );
  });
  return [h('h3', null, `Steps (${steps.length})`), h('ol', { id: 'job-steps', class: 'timeline' }, items)];
}
