// Keys page (admin keys only): the tenant's keys (never secrets), mint a key (its secret shown once),
// revoke one (a second click confirms; the key is refused at once afterwards).
import { showError } from '../alert.js';
import { fill, h, stateTag, table, when } from '../dom.js';

const TTLS = [
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['2592000', '30 days'],
  ['', 'never'],
];

export function keysPage(main, ctx) {
  const list = h('div', { 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const minted = h('div', { 'aria-live': 'polite' });
  let arming = null;
  const tenant = h('input', {
    id: 'mint-tenant',
    name: 'tenant',
    required: true,
    value: ctx.whoami.tenant === '*' ? '' : ctx.whoami.tenant,
    readonly: ctx.tenant ? true : undefined,
  });
  const form = h(
    'form',
    { class: 'inline', 'aria-labelledby': 'mint-title' },
    h('label', { for: 'mint-tenant' }, 'Tenant', tenant),
    h(
      'label',
      { for: 'mint-agent' },
      'Agent',
      h('small', {}, 'empty: an admin key of the tenant'),
      h('input', { id: 'mint-agent', name: 'agent' }),
    ),
    h(
      'label',
      { for: 'mint-ttl' },
      'Lifetime',
      h(
        'select',
        { id: 'mint-ttl', name: 'ttl' },
        TTLS.map(([v, l]) => h('option', { value: v }, l)),
      ),
    ),
    h('label', { for: 'mint-note' }, 'Note', h('input', { id: 'mint-note', name: 'note', maxlength: '256' })),
    h('button', { type: 'submit' }, 'Mint key'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    showError(null);
    const data = new FormData(form);
    try {
      const key = await ctx.memory.mintKey({
        tenant: String(data.get('tenant')).trim(),
        agent: String(data.get('agent')).trim() || undefined,
        ttl_seconds: data.get('ttl') ? Number(data.get('ttl')) : undefined,
        note: String(data.get('note')).trim() || undefined,
      });
      fill(
        minted,
        h(
          'div',
          { class: 'secret', role: 'status' },
          `Key ${key.id} minted for ${key.namespace ?? `tenant ${key.tenant} (admin)`}. Copy it now: it is shown once.`,
          h('code', { id: 'minted-key' }, key.key),
        ),
      );
      await refresh();
    } catch (err) {
      showError(err);
    }
  });
  main.append(
    h('h2', {}, 'Keys'),
    h('h3', { id: 'mint-title' }, 'Mint a key'),
    form,
    minted,
    h('h3', {}, 'Keys of ', ctx.tenant ?? 'every tenant'),
    list,
  );

  async function revoke(k) {
    if (arming !== k.id) {
      arming = k.id;
      return refresh();
    }
    arming = null;
    try {
      await ctx.memory.revokeKey(k.id);
    } catch (err) {
      showError(err);
    }
    await refresh();
  }

  async function refresh() {
    try {
      const keys = await ctx.memory.keys();
      fill(
        list,
        table({
          caption: `${keys.length} key${keys.length === 1 ? '' : 's'} (expired ones hidden)`,
          empty: 'No keys.',
          rows: keys,
          rowAttrs: (k) => ({ 'data-key': k.id }),
          columns: [
            { label: 'ID', cell: (k) => h('code', {}, k.id) },
            { label: 'Tenant', cell: (k) => k.tenant },
            { label: 'Agent', cell: (k) => k.agent ?? (k.admin ? 'admin' : '—') },
            { label: 'Note', cell: (k) => k.note ?? '—' },
            { label: 'Created', cell: (k) => when(k.created_at) },
            { label: 'Expires', cell: (k) => (k.expires_at ? when(k.expires_at) : 'never') },
            {
              label: 'Status',
              cell: (k) => (k.revoked_at ? h('span', {}, stateTag('revoked'), ' ', when(k.revoked_at)) : 'active'),
            },
            {
              label: 'Action',
              cell: (k) =>
                k.revoked_at || k.id === ctx.whoami.key_id
                  ? '—'
                  : h(
                      'button',
                      { type: 'button', class: arming === k.id ? 'danger' : 'secondary', onclick: () => revoke(k) },
                      arming === k.id ? 'Confirm revoke' : 'Revoke',
                      h('span', { class: 'sr-only' }, ` key ${k.id}`),
                    ),
            },
          ],
        }),
      );
    } catch (err) {
      showError(err);
    }
  }
  refresh();
}
