// The schedules tab: recurring definitions as the Scheduler Durable Object reports them.

async function loadSchedules(isCurrent) {
  const data = await apiCall(API.schedules);
  if (!isCurrent()) return;
  const rows = data.schedules || [];
  if (!rows.length) { replace($('#view'), h('p', { class: 'empty' }, 'No schedules.')); return; }
  const head = ['Name', 'Target', 'Interval', 'Overlap', 'Next run', 'Last run', 'Skipped'];
  replace($('#view'), h('table', { id: 'schedules-table' }, h('thead', null, h('tr', null, head.map((t) => h('th', null, t)))),
    h('tbody', null, rows.map(renderScheduleRow))));
}

function every(ms) {
  if (ms >= 3600000) return `every ${(ms / 3600000).toFixed(1)}h`;
  if (ms >= 60000) return `every ${(ms / 60000).toFixed(1)}m`;
  return `every ${(ms / 1000).toFixed(1)}s`;
}

function renderScheduleRow(s) {
  const late = s.last_fired_at && s.last_run_at && s.last_fired_at > s.last_run_at ? ` +${fmtDuration(s.last_fired_at - s.last_run_at)}` : '';
  const link = s.last_job_id ? h('button', { type: 'button', class: 'link', onclick: () => openJob(s.last_job_id) }, 'job')
    : s.last_run_id ? h('button', { type: 'button', class: 'link', onclick: () => openRun(s.last_run_id) }, 'run') : null;
  return h('tr', null,
    h('td', null, s.name, s.last_error ? h('div', { class: 'error-text' }, s.last_error) : null),
    h('td', null, h('span', { class: 'badge st-cancelled' }, s.kind), ' ', s.target),
    h('td', null, s.cron || (s.every_ms ? every(s.every_ms) : '\u2014')),
    h('td', null, s.overlap), h('td', null, fmtTime(s.next_run_at)),
    h('td', null, fmtTime(s.last_run_at), late, ' ', link),
    h('td', null, String(s.skipped_count || 0), s.last_skipped_at ? ` (last ${fmtTime(s.last_skipped_at)})` : ''));
}
