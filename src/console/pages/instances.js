// Instances page: state, pid, uptime, warm or bound, and an instance's recent output lines (stderr
// marked), updated every 2 s. A failed start's stderr is in the gateway's log and its 503. "Delete" deletes
// an instance and ends its sessions (a second click confirms).
import { showError } from '../alert.js';
import { fill, h, span, stateTag, table } from '../dom.js';
import { poll } from './live.js';
import { servicesOf } from './sessions.js';

export function instancesPage(main, ctx) {
  let selected = null;
  /** The instance whose Delete button was clicked once (the next click deletes it). */
  let arming = null;
  async function remove(i) {
    if (arming !== i.name) {
      arming = i.name;
      live.again();
      return;
    }
    arming = null;
    try {
      await ctx.gateway.deleteInstance(i.name);
      showError(null);
    } catch (err) {
      showError(err);
    }
    live.again();
  }
  const region = h('div', { 'aria-live': 'polite' });
  const logs = h('section', { class: 'panel', 'aria-labelledby': 'logs-title', hidden: true });
  main.append(h('h2', {}, 'Instances'), h('p', { class: 'hint' }, 'Live: refreshed every 2 seconds.'), region, logs);
  const live = poll({
    async load() {
      const [instances, services] = await Promise.all([ctx.gateway.instances(), servicesOf(ctx)]);
      const mine = instances.filter((i) => services.has(i.service));
      if (selected && !mine.some((i) => i.name === selected)) selected = null;
      const lines = selected ? await ctx.gateway.logs(selected).catch(() => []) : null;
      return { mine, lines, selected };
    },
    render({ mine, lines }) {
      const now = Date.now();
      fill(
        region,
        table({
          caption: `${mine.length} instance${mine.length === 1 ? '' : 's'}`,
          empty: 'No instances running.',
          rows: mine,
          rowAttrs: (i) => ({ 'data-instance': i.name }),
          columns: [
            { label: 'Name', cell: (i) => h('code', {}, i.name) },
            { label: 'Service', cell: (i) => i.service },
            { label: 'State', cell: (i) => stateTag(i.state) },
            { label: 'PID', cell: (i) => (i.pid === null ? '—' : String(i.pid)) },
            { label: 'Uptime', cell: (i) => (i.ready_at ? span(now - Date.parse(i.ready_at)) : '—') },
            {
              label: 'Use',
              cell: (i) => (i.warm ? 'warm pool' : i.sessions.length > 0 ? `bound (${i.sessions.length})` : 'free'),
            },
            {
              label: 'Output',
              cell: (i) =>
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'secondary',
                    'aria-expanded': String(selected === i.name),
                    onclick: () => {
                      selected = selected === i.name ? null : i.name;
                      live.again();
                    },
                  },
                  selected === i.name ? 'Hide output' : 'Show output',
                ),
            },
            {
              label: 'Action',
              cell: (i) =>
                i.state === 'stopping'
                  ? '—'
                  : h(
                      'button',
                      { type: 'button', class: arming === i.name ? 'danger' : 'secondary', onclick: () => remove(i) },
                      arming === i.name ? 'Confirm delete' : 'Delete',
                      h('span', { class: 'sr-only' }, ` instance ${i.name}`),
                    ),
            },
          ],
        }),
      );
      logs.hidden = !selected;
      if (!selected) return;
      const recent = (lines ?? []).slice(-40);
      fill(
        logs,
        h('h3', { id: 'logs-title' }, `Recent output of ${selected}`),
        recent.length === 0
          ? h('p', { class: 'empty' }, 'No output yet.')
          : h(
              'pre',
              { class: 'logs', tabindex: '0' },
              recent.map((l) =>
                h(
                  'span',
                  { class: l.stream },
                  `${l.time.slice(11, 19)} ${l.stream === 'stderr' ? 'ERR' : 'OUT'} ${l.line}\n`,
                ),
              ),
            ),
      );
    },
  });
  return () => live.stop();
}
