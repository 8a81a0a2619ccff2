/**
 * @module
 * How the everyday CLI commands print: aligned human tables (cells cut to fit a terminal's width), or
 * the API's JSON as it came with `--json`, for scripts. Writes to stdout only; errors go through main.ts.
 */

/** One column of a table: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => unknown;
}

/** A cell as text: null and undefined as `-`, arrays comma-joined, objects as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cellText).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ');
}

/** Renders rows as an aligned table; with no rows, `empty` instead. `maxCell` cuts long cells with `…`. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty: string, maxCell = 60): string {
  if (rows.length === 0) return `${empty}\n`;
  const cut = (s: string) => (s.length > maxCell ? `${s.slice(0, maxCell - 1)}…` : s);
  const cells = rows.map((r) => columns.map((c) => cut(cellText(c.cell(r)))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => (row[i] as string).length)));
  const line = (parts: string[]) =>
    parts
      .map((p, i) => (i === parts.length - 1 ? p : p.padEnd(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n')}\n`;
}

/** Prints `data` as JSON with `--json`, else the table of `rows`. */
export function print<T>(
  flags: { json?: boolean },
  data: unknown,
  rows: readonly T[],
  columns: readonly Column<T>[],
  empty = '(none)',
): void {
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return;
  }
  const width = process.stdout.isTTY ? Math.max(20, Math.floor((process.stdout.columns ?? 120) / 2)) : 200;
  process.stdout.write(renderTable(rows, columns, empty, width));
}

/** Prints one result object: JSON with `--json`, else `key: value` lines. */
export function printRecord(flags: { json?: boolean }, data: Record<string, unknown>): void {
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
    return;
  }
  const width = Math.max(...Object.keys(data).map((k) => k.length));
  const lines = Object.entries(data).map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cellText(v)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
