/**
 * @module
 * Schema migrations of the PostgreSQL store: numbered SQL files in `migrations/`, applied in order at
 * start, each in its own transaction, under a session advisory lock so replicas starting at once on an
 * empty database queue up and all come up (the first applies, the others find nothing left to do).
 * `schema_migrations` records what was applied. Called by `openPostgresStore`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

/** Advisory lock id held while migrating ("tether" in ASCII). */
const MIGRATION_LOCK = 0x746574686572;

/**
 * How long the lock wait and each migration may take. Not the pool's query timeout (5 s by default):
 * a migration that builds an index over millions of rows runs longer, and a replica starting meanwhile
 * waits for the lock as long as that takes.
 */
const MIGRATION_TIMEOUT_MS = 60 * 60_000;

const folder = new URL('./migrations/', import.meta.url);

/** The migration files, in order (`NNN-name.sql`). */
export function migrationFiles(): string[] {
  return readdirSync(folder)
    .filter((f) => /^\d{3}-[\w-]+\.sql$/.test(f))
    .sort();
}

/** The schema version this code writes. */
export const SCHEMA_VERSION = migrationFiles().length;

/**
 * Brings the database to `SCHEMA_VERSION`.
 * @returns the versions applied by this call (empty when another replica had applied them)
 * @throws {Error} when the database was written by a newer Tether
 */
export async function migrate(pool: pg.Pool): Promise<number[]> {
  const pooled = await pool.connect();
  const applied: number[] = [];
  const client = {
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      pooled.query<R>({ text, values, query_timeout: MIGRATION_TIMEOUT_MS } as pg.QueryConfig),
  };
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
      const current = rows[0]?.v ?? 0;
      if (current > SCHEMA_VERSION) {
        throw new Error(
          `Cannot open the database as its schema version is ${current} and this Tether knows up to ${SCHEMA_VERSION}: upgrade Tether`,
        );
      }
      for (const [i, file] of migrationFiles().entries()) {
        const version = i + 1;
        if (version <= current) continue;
        const sql = readFileSync(new URL(file, folder), 'utf8');
        await client.query('BEGIN');
        try {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [version, file]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        applied.push(version);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    pooled.release();
  }
  return applied;
}
