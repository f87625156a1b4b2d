/* global $, ApiError, CONFIG, h, keepPageKey, replace, sessionCall, sessionLost, setStatus, stopRefresh,
   whenSignedIn */
/* exported noteIdentity, showSignIn */

// Sign-in (ADR-0064): the token typed here goes once to POST /api/session, which answers with an HttpOnly
// session cookie; the page never stores the token. A wrong token keeps the form, with the server's reason.

const SIGN_IN_MESSAGES = {
  'wrong token': 'That token is not correct. Check it (tsumugi dev prints it at start) and try again.',
};

// Any cookie of the configured name at path "/" is a raw token an earlier dashboard stored there, readable by
// every page of this host: delete it. (This writes a deletion; nothing here reads document.cookie.)
function forgetStoredToken() {
  if (CONFIG.tokenCookie) document.cookie = `${CONFIG.tokenCookie}=; path=/; max-age=0; SameSite=Strict`;
}

function showSignIn(onSignedIn) {
  const screen = $('#auth');
  stopRefresh();
  screen.hidden = false;
  if (!CONFIG.tokenCookie) {
    replace(
      screen,
      h(
        'div',
        { class: 'auth-box' },
        h('p', null, 'Not authorized. Sign in through your identity provider and reload.'),
      ),
    );
    return;
  }
  const input = h('input', {
    type: 'password',
    name: 'token',
    autocomplete: 'current-password',
    'aria-label': 'Access token',
    required: true,
  });
  const message = h('p', { id: 'sign-in-error', class: 'sign-in-error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { id: 'token-form', onsubmit: (event) => submitToken(event, input, message, button, onSignedIn) },
    h('p', null, 'Enter your access token to continue.'),
    input,
    message,
    button,
  );
  replace(screen, h('div', { class: 'auth-box' }, h('h2', null, 'Tsumugi'), form));
  input.focus();
}

async function submitToken(event, input, message, button, onSignedIn) {
  event.preventDefault();
  const token = input.value.trim();
  if (!token) return;
  button.disabled = true;
  message.hidden = true;
  try {
    const answer = await sessionCall('POST', { token });
    keepPageKey(answer && answer.pageKey);
    if (answer) noteIdentity({ signedIn: true, identity: answer.identity, role: answer.role });
  } catch (error) {
    const known = error instanceof ApiError && SIGN_IN_MESSAGES[error.message];
    message.textContent = known || `Sign-in failed: ${error.message}`;
    message.hidden = false;
    button.disabled = false;
    input.select(); // the token stays, selected, so a typo is fixed by typing again
    return;
  }
  $('#auth').hidden = true;
  replace($('#auth'));
  showSignOut();
  onSignedIn();
}

async function signOut() {
  try {
    await sessionCall('DELETE');
  } catch (error) {
    setStatus(`Sign-out failed: ${error.message}`, true);
    return;
  }
  keepPageKey(null);
  const button = $('#sign-out');
  if (button) button.remove();
  sessionLost();
}

// A "Sign out" button at the end of the header, once signed in with a token.
function showSignOut() {
  const header = $('header.top');
  if (!CONFIG.tokenCookie || !header || $('#sign-out')) return;
  header.append(h('button', { id: 'sign-out', type: 'button', onclick: signOut }, 'Sign out'));
}

// Roles (ADR-0151): every button that changes something carries data-needs="operator" or "admin". Those the
// signed-in role may not use are disabled, their title says which role they need, and the header says who is
// signed in with which role. The server refuses them anyway (403); this only keeps the page honest.
const ROLE_RANK = { viewer: 0, operator: 1, admin: 2 };
const signedInAs = { known: false, identity: null, role: null };

function noteIdentity(session) {
  // A server that does not say the role (no "role" key at all) gates nothing here; it still refuses with 403.
  Object.assign(signedInAs, {
    known: Boolean(session.signedIn) && 'role' in session,
    identity: session.identity || null,
    role: session.role || null,
  });
  showIdentity();
  lockActions(document);
}

function mayDo(needed) {
  return !signedInAs.known || (signedInAs.role !== null && ROLE_RANK[signedInAs.role] >= ROLE_RANK[needed]);
}

function roleReason(needed) {
  const who = signedInAs.identity || 'You';
  return signedInAs.role
    ? `Needs the ${needed} role; ${who} has the ${signedInAs.role} role`
    : `Needs the ${needed} role; ${who} has no role here`;
}

function lockActions(root) {
  for (const button of root.querySelectorAll('[data-needs]')) {
    if (mayDo(button.dataset.needs) || button.hasAttribute('data-locked')) continue;
    button.disabled = true;
    button.setAttribute('data-locked', '');
    button.title = roleReason(button.dataset.needs);
  }
}

function showIdentity() {
  const header = $('header.top');
  const old = $('#signed-in-as');
  if (old) old.remove();
  if (!header || !signedInAs.known || !signedInAs.identity) return;
  const text = signedInAs.role
    ? `${signedInAs.identity} \u00b7 ${signedInAs.role}`
    : `${signedInAs.identity} \u00b7 no role`;
  const why =
    signedInAs.role === 'admin'
      ? 'You may change everything.'
      : signedInAs.role === 'operator'
        ? 'You may act on jobs, runs and schedules; policies and schedule changes need an admin.'
        : signedInAs.role === 'viewer'
          ? 'You may look; actions need the operator role.'
          : 'You are signed in but have no role here: ask an admin to give you one.';
  header.append(
    h(
      'span',
      { id: 'signed-in-as', class: 'signed-in-as', title: why, 'data-role': signedInAs.role || 'none' },
      text,
    ),
  );
}

new MutationObserver(() => lockActions(document)).observe(document.documentElement, {
  childList: true,
  subtree: true,
});
forgetStoredToken();
whenSignedIn().then(showSignOut, () => {});
