// One agent's memory: current beliefs (or as of a time), text search, and a fact's history as a
// timeline (assertions, supersessions, retractions, and the actor: agent, session = pod, key id);
// then its resume records (agent-records.js).
import { showError } from '../alert.js';
import { fill, h, table, when } from '../dom.js';
import { agentRecords } from './agent-records.js';

/** Marks each event of a fact: superseded (a later assertion of a single predicate replaced it), retracted. */
export function timeline(events, single) {
  return events.map((e, i) => {
    if (e.retraction) return { ...e, mark: 'retracted' };
    const later = events.slice(i + 1);
    const retractedBy = later.find(
      (x) => x.retraction && (x.value === null || String(x.value).toLowerCase() === String(e.value).toLowerCase()),
    );
    const supersededBy = single
      ? later.find((x) => !x.retraction && String(x.value).toLowerCase() !== String(e.value).toLowerCase())
      : undefined;
    return { ...e, mark: supersededBy ? 'superseded' : retractedBy ? 'withdrawn' : 'held', by: supersededBy };
  });
}

function localInput(date) {
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function agentPage(main, ctx, namespace) {
  const ns = ctx.whoami.admin ? namespace : ctx.whoami.namespace;
  let cardinality = new Map();
  const q = h('input', { id: 'q', name: 'q', type: 'search', placeholder: 'words in subject, value or evidence' });
  const asOf = h('input', { id: 'as-of', name: 'as_of', type: 'datetime-local', step: '1' });
  const beliefs = h('div', { 'aria-live': 'polite' }, h('p', {}, 'Loading…'));
  const history = h('section', { class: 'panel', 'aria-labelledby': 'history-title', hidden: true });
  const form = h(
    'form',
    { class: 'inline', 'aria-label': 'Read beliefs' },
    h('label', { for: 'q' }, 'Search', q),
    h('label', { for: 'as-of' }, 'As of', h('small', {}, 'local time; empty = now'), asOf),
    h('button', { type: 'submit' }, 'Read'),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          q.value = '';
          asOf.value = '';
          read();
        },
      },
      'Now',
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    read();
  });
  main.append(h('h2', {}, 'Agent ', h('code', {}, ns)), form, beliefs, history);
  agentRecords(main, ctx, ns);

  async function read() {
    showError(null);
    const at = asOf.value ? new Date(asOf.value).toISOString() : undefined;
    try {
      const rows = await ctx.memory.recall(ns, { q: q.value.trim() || undefined, as_of: at, limit: 1000 });
      fill(
        beliefs,
        table({
          caption: `${rows.length} belief${rows.length === 1 ? '' : 's'}${at ? ` as of ${at}` : ''}${q.value ? ` matching “${q.value}”` : ''}`,
          empty: at ? `Nothing was believed as of ${at}.` : 'No beliefs.',
          rows,
          rowAttrs: (b) => ({ 'data-fact': `${b.subject}/${b.predicate}` }),
          columns: [
            { label: 'Subject', cell: (b) => b.subject },
            { label: 'Predicate', cell: (b) => h('code', {}, b.predicate) },
            { label: 'Value', cell: (b) => h('strong', { class: 'value' }, String(b.value)) },
            { label: 'Observed', cell: (b) => when(b.observed_at) },
            {
              label: 'Replaced',
              cell: (b) => (b.replaced.length ? b.replaced.map((r) => String(r.value)).join(', ') : '—'),
            },
            {
              label: 'History',
              cell: (b) =>
                h(
                  'button',
                  { type: 'button', class: 'secondary', onclick: () => showHistory(b.subject, b.predicate) },
                  'History',
                  h('span', { class: 'sr-only' }, ` of ${b.subject} ${b.predicate}`),
                ),
            },
          ],
        }),
      );
    } catch (err) {
      fill(beliefs);
      showError(err);
    }
  }

  async function showHistory(subject, predicate) {
    try {
      const events = await ctx.memory.history(ns, subject, predicate);
      const items = timeline(events, cardinality.get(predicate) === 'single');
      history.hidden = false;
      fill(
        history,
        h('h3', { id: 'history-title', tabindex: '-1' }, `History of ${subject} · ${predicate}`),
        h(
          'ol',
          { class: 'timeline' },
          items.map((e) =>
            h(
              'li',
              { class: e.mark },
              h(
                'div',
                {},
                when(e.observed_at),
                ' ',
                h(
                  'strong',
                  {},
                  e.retraction
                    ? `retracted ${e.value === null ? 'all values' : String(e.value)}`
                    : `asserted ${String(e.value)}`,
                ),
                e.mark === 'superseded' ? h('span', { class: 'tag' }, `superseded by ${String(e.by.value)}`) : null,
                e.mark === 'withdrawn' ? h('span', { class: 'tag' }, 'withdrawn') : null,
                e.mark === 'held' ? h('span', { class: 'tag' }, 'held') : null,
              ),
              h(
                'div',
                { class: 'hint' },
                `by ${e.actor.agent ?? `admin of ${e.actor.tenant}`}${e.actor.session ? ` in pod ${e.actor.session}` : ''} · key ${e.actor.key_id}`,
                e.evidence ? ` · “${e.evidence}”` : '',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  onclick: () => {
                    asOf.value = localInput(new Date(e.observed_at));
                    read();
                  },
                },
                'read as of this',
              ),
            ),
          ),
        ),
      );
      history.querySelector('h3').focus();
    } catch (err) {
      showError(err);
    }
  }

  ctx.memory.registry(ns).then(
    (defs) => {
      cardinality = new Map(
        defs.flatMap((d) => [[d.name, d.cardinality], ...d.aliases.map((a) => [a, d.cardinality])]),
      );
    },
    () => {},
  );
  read();
}
