/* global $, app, replace */
/* exported closeModal, hideModal, modalContent, openModal, refreshModal */

// One modal at a time (job detail, run detail, new job). Its loader re-runs on every auto-refresh so a job
// can be watched as it runs, unless the user is typing into it.
// Opening a detail pushes its route (#/jobs/<id>) so Back closes it; a detail opened from the address
// (deep link, typed hash) replaces nothing and closes back to its tab.

function openModal(route, loader) {
  app.modal = { route, loader };
  $('#modal').hidden = false;
  if (location.hash !== route) {
    history.pushState(null, '', route);
    app.modalPushed = true;
  }
  return loader ? loader() : null;
}

// Hides the modal without touching history (the route already moved on).
function hideModal() {
  app.modal = null;
  $('#modal').hidden = true;
  replace($('#modal-body'));
}

function closeModal() {
  const pushed = app.modalPushed && /^#\/(jobs|runs)\//.test(location.hash);
  app.modalPushed = false;
  hideModal();
  if (pushed)
    history.back(); // back to the entry the detail was opened from
  else if (location.hash !== `#/${app.tab}`) history.pushState(null, '', `#/${app.tab}`);
}

function refreshModal() {
  const body = $('#modal-body');
  const typing =
    body.contains(document.activeElement) && /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (app.modal && app.modal.loader && !typing) return app.modal.loader();
  return null;
}

function modalContent(...children) {
  replace($('#modal-body'), ...children);
}
