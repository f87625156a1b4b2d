// One modal at a time (job detail, run detail, new job). Its loader re-runs on every auto-refresh so a job
// can be watched as it runs, unless the user is typing into it.

function openModal(route, loader) {
  app.modal = { route, loader };
  $('#modal').hidden = false;
  if (location.hash !== route) history.replaceState(null, '', route);
  return loader ? loader() : null;
}

function closeModal() {
  app.modal = null;
  $('#modal').hidden = true;
  replace($('#modal-body'));
  history.replaceState(null, '', `#/${app.tab}`);
}

function refreshModal() {
  const body = $('#modal-body');
  const typing = body.contains(document.activeElement) && /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (app.modal && app.modal.loader && !typing) return app.modal.loader();
  return null;
}

function modalContent(...children) {
  replace($('#modal-body'), ...children);
}
