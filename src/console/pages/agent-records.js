// An agent's resume records on its page: working state, lease holder, recent turns and pointers
// (GET /v1/working-state, /v1/lease, /v1/turns, /v1/pointers), read with the same key as its memory.
import { showError } from '../alert.js';
import { fill, h, table, when } from '../dom.js';

function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v ?? '—')]),
  );
}

const list = (items) =>
  items.length
    ? h(
        'ul',
        {},
        items.map((i) => h('li', {}, i)),
      )
    : '—';

/** Appends the records section to `main` and fills it. */
export function agentRecords(main, ctx, ns) {
  const state = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'state-title' },
    h('h3', { id: 'state-title' }, 'Working state'),
  );
  const lease = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'lease-title' },
    h('h3', { id: 'lease-title' }, 'Lease'),
  );
  const turns = h('section', { 'aria-labelledby': 'turns-title' }, h('h3', { id: 'turns-title' }, 'Recent turns'));
  const pointers = h('section', { 'aria-labelledby': 'pointers-title' }, h('h3', { id: 'pointers-title' }, 'Pointers'));
  main.append(h('div', { class: 'grid' }, state, lease), turns, pointers);
  const m = ctx.memory;
  Promise.all([m.workingState(ns), m.lease(ns), m.turns(ns, 10), m.pointers(ns)]).then(
    ([ws, l, t, p]) => {
      fill(
        state,
        h('h3', { id: 'state-title' }, `Working state (version ${ws.version})`),
        ws.version === 0
          ? h('p', { class: 'empty' }, 'No working state recorded yet.')
          : facts([
              ['Goal', ws.goal],
              ['Focus', ws.focus],
              ['Progress', ws.progress],
              ['Step', ws.step === null ? null : String(ws.step)],
              ['Plan', list(ws.plan)],
              ['Decisions', list(ws.decisions)],
              ['Open questions', list(ws.open_questions)],
              ['Last milestone', ws.last_milestone],
              ['Updated', when(ws.updated_at)],
            ]),
      );
      fill(
        lease,
        h('h3', { id: 'lease-title' }, 'Lease'),
        facts([
          ['Held', l.held ? 'yes' : 'no'],
          ['Holder', l.holder],
          ['Epoch', l.epoch === null ? null : String(l.epoch)],
          ['Acquired', when(l.acquired_at)],
          ['Expires', when(l.expires_at)],
        ]),
      );
      fill(
        turns,
        h('h3', { id: 'turns-title' }, `Recent turns (${t.turns.length} of ${t.total})`),
        table({
          empty: 'No turns recorded.',
          rows: t.turns,
          columns: [
            { label: 'Seq', cell: (x) => String(x.seq) },
            { label: 'Role', cell: (x) => x.role },
            {
              label: 'Content',
              cell: (x) => x.brief ?? (x.content.length > 200 ? `${x.content.slice(0, 200)}…` : x.content),
            },
            { label: 'At', cell: (x) => when(x.at) },
          ],
        }),
      );
      fill(
        pointers,
        h('h3', { id: 'pointers-title' }, 'Pointers'),
        table({
          empty: 'No pointers.',
          rows: p.pointers,
          columns: [
            { label: 'Name', cell: (x) => h('code', {}, x.name) },
            { label: 'Type', cell: (x) => x.type },
            {
              label: 'Fields',
              cell: (x) =>
                Object.entries(x.fields)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(', '),
            },
            { label: 'Note', cell: (x) => x.note ?? '—' },
            { label: 'Updated', cell: (x) => when(x.updated_at) },
          ],
        }),
      );
    },
    (err) => showError(err),
  );
}
