/**
 * @module
 * Schema migrations of the SQLite store: numbered SQL files applied in order, each in its own
 * transaction, with `PRAGMA user_version` recording the last one applied. 001 is idempotent (databases
 * made before versioning have user_version 0 and already hold it).
 */
import { readFileSync } from 'node:fs';
import type Database from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  '001-schema.sql',
  '002-beliefs-covering.sql',
  '003-beliefs-clustered.sql',
  '004-replaced-bounded.sql',
  '005-resume.sql',
  '006-value-lookups.sql',
  '007-lease-ttl.sql',
  '008-checkpoints.sql',
  '009-big-fact-values.sql',
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings `db` to `SCHEMA_VERSION`.
 * @throws {Error} when the database was written by a newer Tether (its version is higher)
 */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `Cannot open the database as its schema version is ${current} and this Tether knows up to ${SCHEMA_VERSION}: upgrade Tether`,
    );
  }
  MIGRATIONS.forEach((file, i) => {
    const version = i + 1;
    if (version <= current) return;
    const sql = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    })();
  });
}
