// Sessions page: every live gateway session (the API's key prefix; the whole key only when asked, read with
// ?reveal=keys then), its service, instance, agent (claim), state, idle deadline, expiry, last activity;
// updated every 2 s. "End" ends a session as an idle delete would (a second click confirms).
import { showError } from '../alert.js';
import { fill, h, parseDuration, stateTag, table, when } from '../dom.js';
import { poll } from './live.js';

/** Services by name, with their namespace, filtered to the key's tenant. */
export async function servicesOf(ctx) {
  const all = await ctx.gateway.services();
  return new Map(all.filter((s) => !ctx.tenant || s.namespace === ctx.tenant).map((s) => [s.name, s]));
}

/** The idle deadline: the API's when it gives one, else last activity + the service's session-timeout. */
function idleDeadline(s, svc) {
  if (s.idle_deadline !== undefined) return s.idle_deadline;
  if (s.state === 'active' || !svc) return null;
  const ms = parseDuration(svc.session_timeout);
  return Number.isFinite(ms) ? new Date(Date.parse(s.last_active) + ms).toISOString() : null;
}

export function sessionsPage(main, ctx) {
  const revealed = new Set();
  /** The row whose End button was clicked once (the next click ends it). */
  let arming = null;
  async function end(s) {
    if (arming !== s.id) {
      arming = s.id;
      live.again();
      return;
    }
    arming = null;
    try {
      await ctx.gateway.endSession(s.sessionId, s.service);
      showError(null);
    } catch (err) {
      showError(err);
    }
    live.again();
  }
  const region = h('div', { 'aria-live': 'polite' });
  main.append(
    h('h2', {}, 'Sessions'),
    h(
      'p',
      { class: 'hint' },
      'Live: refreshed every 2 seconds. A session shows a prefix of its key: the whole key is the session cookie.',
    ),
    region,
  );
  const live = poll({
    async load() {
      const [sessions, services] = await Promise.all([ctx.gateway.sessions(revealed.size > 0), servicesOf(ctx)]);
      return { sessions: sessions.filter((s) => services.has(s.service)), services: [...services.values()] };
    },
    async render({ sessions, services }) {
      const byName = new Map(services.map((s) => [s.name, s]));
      const rows = sessions.map((s) => ({
        ...s,
        sessionId: s.id,
        id: `${s.service}/${s.instance}/${s.key_prefix}`,
        svc: byName.get(s.service),
      }));
      fill(
        region,
        table({
          caption: `${rows.length} session${rows.length === 1 ? '' : 's'}`,
          empty: 'No sessions yet. A request through the gateway starts one.',
          rows,
          rowAttrs: (s) => ({ 'data-session': s.id }),
          columns: [
            {
              label: 'Session',
              cell: (s) =>
                h(
                  'span',
                  {},
                  h('code', {}, revealed.has(s.id) && s.key ? s.key : s.key_prefix),
                  ' ',
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'link',
                      'aria-pressed': String(revealed.has(s.id)),
                      onclick: () => {
                        revealed.has(s.id) ? revealed.delete(s.id) : revealed.add(s.id);
                        live.again();
                      },
                    },
                    revealed.has(s.id) ? 'hide key' : 'show key',
                  ),
                ),
            },
            { label: 'Service', cell: (s) => s.service },
            { label: 'Instance', cell: (s) => h('code', {}, s.instance) },
            {
              label: 'Agent',
              cell: (s) => {
                if (!s.claim) return '—';
                const ns = s.svc ? `${s.svc.namespace}:${s.claim}` : null;
                return ctx.memory && ns ? h('a', { href: `#/agent/${encodeURIComponent(ns)}` }, s.claim) : s.claim;
              },
            },
            { label: 'State', cell: (s) => stateTag(s.state) },
            { label: 'Idle deadline', cell: (s) => when(idleDeadline(s, s.svc)) },
            {
              label: 'Expires',
              cell: (s) =>
                s.expires_at ? when(s.expires_at) : s.svc?.idle_policy === 'delete' ? 'at idle deadline' : 'never',
            },
            { label: 'Last activity', cell: (s) => when(s.last_active) },
            {
              label: 'Action',
              cell: (s) =>
                h(
                  'button',
                  { type: 'button', class: arming === s.id ? 'danger' : 'secondary', onclick: () => end(s) },
                  arming === s.id ? 'Confirm end' : 'End',
                  h('span', { class: 'sr-only' }, ` session ${s.sessionId}`),
                ),
            },
          ],
        }),
      );
    },
  });
  return () => live.stop();
}
