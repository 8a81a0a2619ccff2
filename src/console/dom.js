// Small DOM helpers of the console: elements built with textContent only (no HTML strings, so no value
// from the API is ever parsed as markup), accessible tables that become cards on narrow screens, times.

/** Creates an element: `attrs` sets attributes (`on*` functions become listeners); children are nodes or text. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/**
 * A table: `columns` are `{label, cell: row => node|text}`; each cell carries its column label, shown
 * beside it when the table is laid out as cards (narrow screens).
 */
export function table({ caption, columns, rows, empty, rowAttrs }) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      {},
      caption ? h('caption', {}, caption) : null,
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { scope: 'col' }, c.label)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((row) =>
          h(
            'tr',
            rowAttrs ? rowAttrs(row) : {},
            columns.map((c) => h('td', { 'data-label': c.label }, c.cell(row) ?? '—')),
          ),
        ),
      ),
    ),
  );
}

/** A `<time>` of an ISO instant in local time (the ISO text as its title); `—` for none. */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return h('time', { datetime: iso, title: iso }, d.toLocaleString(undefined, { hour12: false }));
}

/** A duration in ms as `3h 12m`, `45s`. */
export function span(ms) {
  if (!(ms >= 0)) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const hr = Math.floor(m / 60);
  return hr < 48 ? `${hr}h ${m % 60}m` : `${Math.floor(hr / 24)}d ${hr % 24}h`;
}

/** Knative-style duration text (`30m`, `1h30m`, `90s`) to ms; NaN when not one. */
export function parseDuration(text) {
  const units = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
  let used = 0;
  for (const m of String(text).matchAll(re)) {
    total += Number(m[1]) * units[m[2]];
    used += m[0].length;
  }
  return used === String(text).length && used > 0 ? total : Number.NaN;
}

/** A state word with its colour class. */
export function stateTag(state) {
  return h('span', { class: `state-${state}` }, state);
}

/** Replaces the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}
