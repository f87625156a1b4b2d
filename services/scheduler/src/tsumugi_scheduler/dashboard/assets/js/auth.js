// Sign-in: on any 401 the dashboard asks for the token and keeps it in the configured cookie, which the
// server reads as well as a bearer header (the page itself is served without auth and holds no data).

function showSignIn() {
  const screen = $('#auth');
  if (!screen.hidden) return;
  stopRefresh();
  screen.hidden = false;
  if (!CONFIG.tokenCookie) {
    replace(screen, h('div', { class: 'auth-box' },
      h('p', null, 'Not authorized. Sign in through your identity provider and reload.')));
    return;
  }
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'current-password',
    'aria-label': 'Access token', required: true });
  const form = h('form', { id: 'token-form', onsubmit: (event) => submitToken(event, input) },
    h('p', null, 'Enter your access token to continue.'), input,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  replace(screen, h('div', { class: 'auth-box' }, h('h2', null, 'Tsumugi'), form));
  input.focus();
}

function submitToken(event, input) {
  event.preventDefault();
  const token = input.value.trim();
  if (!token) return;
  document.cookie = `${CONFIG.tokenCookie}=${encodeURIComponent(token)}; path=/; SameSite=Strict`;
  $('#auth').hidden = true;
  // The token may unlock tabs that answered 401 before: detect features again, then load.
  start();
}
