// Agents page: the namespaces this key reaches — its own (agent key), or those of the tenant's agent keys
// and of live gateway sessions (admin) — and a field to open any namespace of the tenant.
import { showError } from '../alert.js';
import { fill, h, table } from '../dom.js';
import { servicesOf } from './sessions.js';

const NAMESPACE = '[a-z0-9]([a-z0-9._\\-]{0,126}[a-z0-9])?:[a-z0-9]([a-z0-9._\\-]{0,126}[a-z0-9])?';

async function knownAgents(ctx) {
  if (!ctx.whoami.admin) return [{ namespace: ctx.whoami.namespace, from: 'this key' }];
  const found = new Map();
  for (const k of await ctx.memory.keys()) {
    if (k.namespace && !k.revoked_at) found.set(k.namespace, found.get(k.namespace) ?? 'agent key');
  }
  if (ctx.gateway) {
    const services = await servicesOf(ctx);
    for (const s of await ctx.gateway.sessions()) {
      const svc = services.get(s.service);
      if (svc && s.claim) found.set(`${svc.namespace}:${s.claim}`, `session of ${s.service}`);
    }
  }
  return [...found]
    .filter(([ns]) => !ctx.tenant || ns.startsWith(`${ctx.tenant}:`))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([namespace, from]) => ({ namespace, from }));
}

export function agentsPage(main, ctx) {
  const list = h('div', {}, h('p', {}, 'Loading…'));
  const input = h('input', {
    id: 'open-ns',
    name: 'namespace',
    required: true,
    pattern: NAMESPACE,
    spellcheck: 'false',
    placeholder: ctx.tenant ? `${ctx.tenant}:agent` : 'tenant:agent',
  });
  const open = h(
    'form',
    { class: 'inline', 'aria-label': 'Open a namespace' },
    h('label', { for: 'open-ns' }, 'Namespace', input),
    h('button', { type: 'submit' }, 'Open'),
  );
  open.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `#/agent/${encodeURIComponent(input.value.trim())}`;
  });
  main.append(h('h2', {}, 'Agents'), ctx.whoami.admin ? open : null, list);
  knownAgents(ctx).then(
    (rows) =>
      fill(
        list,
        table({
          caption: 'Namespaces (tenant:agent) with keys or live sessions',
          empty: 'No agents known yet: open a namespace above.',
          rows,
          columns: [
            {
              label: 'Namespace',
              cell: (r) => h('a', { href: `#/agent/${encodeURIComponent(r.namespace)}` }, r.namespace),
            },
            { label: 'Known from', cell: (r) => r.from },
          ],
        }),
      ),
    (err) => {
      fill(list);
      showError(err);
    },
  );
}
