/**
 * Migrations of the PostgreSQL store are not bound by the pool's query timeout: a replica that starts
 * while another holds the migration lock (a long migration) waits for it and comes up.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

const server: TestPostgres = await startPostgres();
after(() => server.stop());

/** The lock migrations take ("tether" in ASCII), as src/store/postgres/migrations.ts. */
const MIGRATION_LOCK = 0x746574686572;

describe('PostgreSQL migrations', () => {
  it('wait for a migration lock held longer than the query timeout, then open', async () => {
    const url = await server.createDatabase();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      let opened = false;
      const opening = openPostgresStore({ url, poolSize: 2, queryTimeoutMs: 200 }).then((s) => {
        opened = true;
        return s;
      });
      await new Promise((r) => setTimeout(r, 800)); // four query timeouts
      assert.equal(opened, false, 'waits while the lock is held');
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      const store = await opening;
      try {
        await store.ping();
      } finally {
        await store.close();
      }
    } finally {
      await holder.end();
    }
  });
});
