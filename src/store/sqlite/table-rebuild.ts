/**
 * @module
 * Rebuilds one table into fresh pages in short steps, for a purge (issue 21): `secure_delete` zeroes
 * freed cells and freed pages, but a page that a b-tree balance rebuilt keeps, in its unallocated area,
 * the old copies of the cells it moved (SQLite's `rebuildPage` does not clear it), so bytes of rows
 * deleted long ago can stay in a live page. Only freeing the page clears them: a copy of the table is
 * built beside it (`T__rebuild`), swapped in, and the old one (`T__purged`) emptied and dropped, every
 * page of it zeroed as it is freed. Each step is a transaction of at most `SLICE_MS`; writes go on
 * between them: temporary triggers copy every write to the table into the new one meanwhile.
 * Used by `purge-runner.ts` on the tables that held a purged namespace's resume records.
 */
import type Database from 'better-sqlite3';
import { inSlices, type PurgeProgress } from './purge.ts';

/** Rows per copy statement (resume rows can be large: a turn or output of up to a few MiB). */
const COPY_PICK = 8;

/** Rows per delete statement on the old table. */
const ERASE_PICK = 32;

/** Name suffixes of the copy and of the old table (a leftover of either is dropped at open). */
const COPY = '__rebuild';
const OLD = '__purged';

/** The `meta` key that says `table` must be rebuilt (set before its rows are deleted, cleared at the swap). */
const markOf = (table: string) => `rebuild:${table}`;

/**
 * Records, durably, that `table` must be rebuilt: a purge calls it before it deletes rows there, so a
 * process stopped before the rebuild swapped the copy in rebuilds it at the next open (`leftoverRebuilds`).
 */
export function markRebuild(db: Database.Database, table: string): void {
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, 1)').run(markOf(table));
}

/**
 * An explicit index's name on the copy: SQLite renames no index, so a rebuilt table's index takes the other name
 * (`turns_message` <-> `turns_message__b`). A migration that drops or changes such an index must allow for both.
 */
const INDEX_TWIN = '__b';

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Columns and the single-column key of `table` (`rowid`, or the PRIMARY KEY of a WITHOUT ROWID table). */
function shapeOf(db: Database.Database, table: string): { columns: string[]; key: string; rowid: boolean } {
  const info = db.prepare(`SELECT name, pk FROM pragma_table_info(?)`).all(table) as { name: string; pk: number }[];
  const sql = db.prepare(`SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`).pluck().get(table) as
    | string
    | undefined;
  if (info.length === 0 || sql === undefined) throw new Error(`Cannot rebuild table ${table} as it does not exist`);
  const rowid = !/WITHOUT\s+ROWID\s*$/i.test(sql.trim());
  const pk = info.filter((c) => c.pk > 0);
  if (!rowid && pk.length !== 1) throw new Error(`Cannot rebuild table ${table} as its key is not one column`);
  return { columns: info.map((c) => c.name), key: rowid ? 'rowid' : (pk[0] as { name: string }).name, rowid };
}

/** Options of `rebuildTable`. */
export interface RebuildOptions {
  /** Counts the copy and delete transactions and the rebuilds. */
  progress: PurgeProgress;
  /** Longest transaction in ms (tests make it tiny: a statement per transaction). @default SLICE_MS */
  sliceMs?: number;
}

/**
 * Copies `table` into fresh pages and drops the old ones (see the module header), a slice per step.
 * Reads and writes of the table go on between steps and find every row.
 */
export async function rebuildTable(db: Database.Database, table: string, o: RebuildOptions): Promise<void> {
  const { progress, sliceMs } = o;
  const copy = table + COPY;
  const old = table + OLD;
  const { columns, key, rowid } = shapeOf(db, table);
  const cols = (rowid ? ['rowid', ...columns] : columns).map((c) => (c === 'rowid' ? c : q(c)));
  const list = cols.join(', ');
  const triggers = ['ins', 'upd', 'del'].map((t) => q(`${table}${COPY}_${t}`));
  const dropTriggers = () => {
    for (const t of triggers) db.exec(`DROP TRIGGER IF EXISTS temp.${t}`);
  };
  try {
    db.transaction(() => {
      const schema = db.prepare(`SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = ? AND sql IS NOT NULL`);
      for (const o of schema.all(table) as { type: string; name: string; sql: string }[]) {
        if (o.type === 'table')
          db.exec(o.sql.replace(/^CREATE\s+TABLE\s+("[^"]*(?:""[^"]*)*"|\S+)/i, `CREATE TABLE ${q(copy)}`));
        else if (o.type === 'index') {
          const twin = o.name.endsWith(INDEX_TWIN) ? o.name.slice(0, -INDEX_TWIN.length) : o.name + INDEX_TWIN;
          db.exec(
            o.sql.replace(
              /^CREATE\s+(UNIQUE\s+)?INDEX\s+(?:"[^"]*(?:""[^"]*)*"|\S+)\s+ON\s+(?:"[^"]*(?:""[^"]*)*"|\S+)/i,
              (_m, unique: string | undefined) => `CREATE ${unique ?? ''}INDEX ${q(twin)} ON ${q(copy)}`,
            ),
          );
        } else throw new Error(`Cannot rebuild table ${table} as it has a ${o.type} (${o.name})`);
      }
      // Temporary (this connection only, gone with it): every write of the table is one of the store's.
      const values = cols.map((c) => `new.${c}`).join(', ');
      const [ins, upd, del] = triggers as [string, string, string];
      db.exec(`CREATE TEMP TRIGGER ${ins} AFTER INSERT ON ${q(table)} BEGIN
        INSERT OR REPLACE INTO ${q(copy)} (${list}) VALUES (${values}); END`);
      db.exec(`CREATE TEMP TRIGGER ${upd} AFTER UPDATE ON ${q(table)} BEGIN
        DELETE FROM ${q(copy)} WHERE ${key} = old.${key};
        INSERT OR REPLACE INTO ${q(copy)} (${list}) VALUES (${values}); END`);
      db.exec(`CREATE TEMP TRIGGER ${del} AFTER DELETE ON ${q(table)} BEGIN
        DELETE FROM ${q(copy)} WHERE ${key} = old.${key}; END`);
    })();

    // Rows already copied by a trigger are newer than the table's at the last step: OR IGNORE keeps them.
    const pick = db.prepare(`SELECT ${key} FROM ${q(table)} WHERE ${key} > ? ORDER BY ${key} LIMIT ?`).pluck();
    const put = db.prepare(
      `INSERT OR IGNORE INTO ${q(copy)} (${list}) SELECT ${list} FROM ${q(table)} WHERE ${key} > ? AND ${key} <= ?`,
    );
    // Below every rowid, and every text key (SQLite orders numbers before text).
    let after: number | string = Number.NEGATIVE_INFINITY;
    await inSlices(
      db,
      (limit) => {
        const keys = pick.all(after, limit) as (number | string)[];
        const last = keys[keys.length - 1];
        if (last === undefined) return 0;
        put.run(after, last);
        after = last;
        return keys.length;
      },
      { committed: () => progress.copies++, pick: COPY_PICK, sliceMs },
    );

    db.transaction(() => {
      dropTriggers();
      db.exec(`ALTER TABLE ${q(table)} RENAME TO ${q(old)}`);
      db.exec(`ALTER TABLE ${q(copy)} RENAME TO ${q(table)}`);
      db.prepare('DELETE FROM meta WHERE key = ?').run(markOf(table));
    })();
  } catch (err) {
    // The table itself is untouched before the swap; its mark stays, so the next open rebuilds it.
    // (A closed connection cannot clean up: the next open drops the copy.)
    if (db.open) {
      dropTriggers();
      db.exec(`DROP TABLE IF EXISTS ${q(copy)}`);
    }
    throw err;
  }
  progress.rebuilds++;
  // Every page of the old table is freed (so zeroed) by the deletes and the final (cheap) DROP.
  const erase = db.prepare(`DELETE FROM ${q(old)} WHERE ${key} IN (SELECT ${key} FROM ${q(old)} LIMIT ?)`);
  await inSlices(db, (limit) => erase.run(limit).changes, {
    committed: () => progress.deletes++,
    pick: ERASE_PICK,
    sliceMs,
  });
  db.exec(`DROP TABLE ${q(old)}`);
}

/**
 * Drops what a rebuild stopped midway (a crash) left: a copy not swapped in yet (the table is whole,
 * stale pages included) or an old table not erased yet (its pages are zeroed as they are freed).
 * At open, before any write.
 * @returns the tables whose rebuild never finished (marked by `markRebuild`): rebuild them again
 */
export function leftoverRebuilds(db: Database.Database): string[] {
  const names = db
    .prepare(
      `SELECT name FROM sqlite_schema WHERE type = 'table'
         AND (name LIKE '%' || ? ESCAPE '\\' OR name LIKE '%' || ? ESCAPE '\\')`,
    )
    .pluck()
    .all(COPY.replaceAll('_', '\\_'), OLD.replaceAll('_', '\\_')) as string[];
  for (const name of names) db.exec(`DROP TABLE ${q(name)}`);
  const marks = db.prepare(`SELECT key FROM meta WHERE key LIKE 'rebuild:%'`).pluck().all() as string[];
  const tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).pluck().all() as string[];
  return marks.map((k) => k.slice('rebuild:'.length)).filter((t) => tables.includes(t));
}
