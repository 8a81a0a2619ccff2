// The console's shell: reads config.json (which APIs this server has), signs in with the memory admin key
// and/or the gateway admin token (kept in sessionStorage: gone with the tab), then routes #/page links.
import { showError, whenUnauthenticated } from './alert.js';
import { ApiError, gatewayApi, loadConfig, memoryApi } from './api.js';
import { fill, h } from './dom.js';
import { agentPage } from './pages/agent.js';
import { agentsPage } from './pages/agents.js';
import { instancesPage } from './pages/instances.js';
import { keysPage } from './pages/keys.js';
import { sessionsPage } from './pages/sessions.js';

const STORE = 'tether-console';
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const signout = document.getElementById('signout');
let leave = () => {};
let ctx;

function pages() {
  const list = [];
  if (ctx.gateway) list.push(['sessions', 'Sessions', sessionsPage], ['instances', 'Instances', instancesPage]);
  if (ctx.memory) list.push(['agents', 'Agents', agentsPage]);
  if (ctx.memory && ctx.whoami?.admin) list.push(['keys', 'Keys', keysPage]);
  return list;
}

function route() {
  leave();
  leave = () => {};
  showError(null);
  const [, page = '', ...rest] = location.hash.split('/');
  const list = pages();
  const found =
    list.find(([id]) => id === page) ?? (page === 'agent' && ctx.memory ? ['agent', '', agentPage] : list[0]);
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.page === (found[0] === 'agent' ? 'agents' : found[0])) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  main.replaceChildren();
  const args = rest.map(decodeURIComponent);
  leave = found[2](main, ctx, ...args) ?? (() => {});
  document.title = `${found[1] || 'Agent'} · Tether console`;
}

function signedIn() {
  fill(
    nav,
    pages().map(([id, label]) => h('a', { href: `#/${id}`, 'data-page': id }, label)),
  );
  nav.hidden = false;
  signout.hidden = false;
  const who = ctx.whoami
    ? `${ctx.whoami.admin ? 'admin' : 'agent'} key ${ctx.whoami.key_id} · tenant ${ctx.whoami.tenant}${ctx.whoami.namespace ? ` · ${ctx.whoami.namespace}` : ''}`
    : 'gateway admin';
  document.getElementById('who').textContent = who;
  window.addEventListener('hashchange', route);
  route();
}

function signOut(message) {
  showError(null);
  sessionStorage.removeItem(STORE);
  window.removeEventListener('hashchange', route);
  leave();
  leave = () => {};
  nav.hidden = true;
  signout.hidden = true;
  document.getElementById('who').textContent = '';
  loginForm(config, message);
}

async function start(config, creds) {
  ctx = {
    config,
    creds,
    memory: memoryApi(config.memory, creds.key),
    gateway: gatewayApi(config.gateway, creds.token),
    whoami: null,
  };
  if (ctx.memory) ctx.whoami = await ctx.memory.whoami();
  if (ctx.gateway) await ctx.gateway.services();
  /** The tenant this key is bound to, or null for '*' (sees every tenant). */
  ctx.tenant = ctx.whoami && ctx.whoami.tenant !== '*' ? ctx.whoami.tenant : null;
  sessionStorage.setItem(STORE, JSON.stringify(creds));
  signedIn();
}

function loginForm(config, message) {
  const error = h('p', { class: 'alert', role: 'alert', hidden: !message }, message ?? '');
  const fields = [];
  if (config.memory !== null) {
    fields.push(
      h(
        'label',
        {},
        'Memory API key',
        h('small', {}, 'the admin key (tether up: .tether/memory/admin.key) or an agent key'),
        h('input', { name: 'key', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' }),
      ),
    );
  }
  if (config.gateway !== null) {
    fields.push(
      h(
        'label',
        {},
        'Gateway admin token',
        h('small', {}, 'tether up: .tether/gateway/admin.token; empty if the gateway has none'),
        h('input', { name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false' }),
      ),
    );
  }
  const form = h(
    'form',
    { class: 'stack', 'aria-labelledby': 'signin-title' },
    h('h2', { id: 'signin-title' }, 'Sign in'),
    h('p', { class: 'hint' }, 'Credentials stay in this tab (sessionStorage) and go only to this server.'),
    error,
    fields,
    h('div', {}, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const data = new FormData(form);
    const creds = { key: data.get('key')?.trim() || undefined, token: data.get('token')?.trim() || undefined };
    try {
      await start(config, creds);
    } catch (err) {
      error.textContent = err instanceof ApiError ? `Refused: ${err.message} (${err.status} ${err.code})` : String(err);
      error.hidden = false;
    }
  });
  fill(main, form);
  form.querySelector('input')?.focus();
}

signout.addEventListener('click', () => signOut());
whenUnauthenticated(() => signOut('Signed out: the server refused the credential.'));

const config = await loadConfig();
const saved = JSON.parse(sessionStorage.getItem(STORE) ?? 'null');
if (saved) {
  start(config, saved).catch((err) => loginForm(config, `Sign in again: ${err.message}`));
} else {
  loginForm(config);
}
