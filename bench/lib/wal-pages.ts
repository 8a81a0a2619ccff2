/**
 * @module
 * Which b-trees a write workload dirties, per commit: `node --import tsx bench/lib/wal-pages.ts <db> <wal>`,
 * where `<wal>` is a copy of the WAL a run appended to `<db>` (see `WAL_COPY` in remember-profile.ts) and
 * `<db>` the database as it was before that run. Reads the WAL frame headers (page number, commit flag)
 * and maps pages to tables and indexes with SQLite's `dbstat`. Pages the run allocated show as "(new)".
 * This is how the deferred FTS indexing and the covering beliefs index were chosen: each dirty page is
 * written to the WAL and again at checkpoint, and at 10^6 events those writes bound remembers/s.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

const [dbPath, walPath] = process.argv.slice(2);
if (!dbPath || !walPath) {
  process.stderr.write('usage: wal-pages.ts <database before the run> <copy of the WAL after it>\n');
  process.exit(2);
}
const wal = readFileSync(walPath);
const pageSize = wal.readUInt32BE(8);
const frames = new Map<number, number>();
let total = 0;
let commits = 0;
// WAL: 32-byte header, then frames of a 24-byte header (page number, size after commit or 0) + one page.
for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
  const page = wal.readUInt32BE(off);
  frames.set(page, (frames.get(page) ?? 0) + 1);
  total++;
  if (wal.readUInt32BE(off + 4) !== 0) commits++;
}
const db = new Database(dbPath, { readonly: true });
const owner = new Map<number, string>();
for (const r of db.prepare('SELECT name, pageno FROM dbstat').iterate() as Iterable<{ name: string; pageno: number }>) {
  owner.set(r.pageno, r.name);
}
db.close();
const byTree = new Map<string, number>();
for (const [page, n] of frames) {
  const name = owner.get(page) ?? '(new)';
  byTree.set(name, (byTree.get(name) ?? 0) + n);
}
const per = (n: number) => (n / Math.max(1, commits)).toFixed(1);
process.stdout.write(`${total} frames, ${commits} commits: ${per(total)} pages per commit\n`);
for (const [name, n] of [...byTree].sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`  ${name.padEnd(32)} ${per(n).padStart(6)} per commit\n`);
}
