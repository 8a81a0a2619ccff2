/**
 * The PostgreSQL driver: the shared `Store` conformance suite against a real PostgreSQL (started by
 * `test/helpers/postgres.ts`, one database for this file), then what only a shared store shows:
 * migrations applied once by stores opening at once, the change channel (NOTIFY to other stores,
 * reconnect + resync after a restart), and the password kept out of errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { StoreChange } from '../../src/store/store-lifecycle.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { makeKey } from './conformance/helpers.ts';
import { held } from './conformance/resume-helpers.ts';
import { freshNamespace, freshTenant, storeConformance } from './conformance.ts';

const server: TestPostgres = await startPostgres();
after(() => server.stop());
const url = await server.createDatabase();

// Generous waits for a connection and a query: 200 concurrent lease acquires queue on 4 connections, which on a
// loaded machine outlasts the 2 s default wait (503 unavailable); the store's timeouts are not what conformance tests.
storeConformance('postgres', () =>
  openPostgresStore({ url, poolSize: 4, connectTimeoutMs: 60_000, queryTimeoutMs: 60_000 }),
);

/** Resolves with the first change `store` reports that matches `want`. */
function nextChange(store: PostgresStore, want: (c: StoreChange) => boolean): Promise<StoreChange> {
  return new Promise((resolve) => {
    const stop = store.subscribe((c) => {
      if (!want(c)) return;
      stop();
      resolve(c);
    });
  });
}

describe('PostgresStore', () => {
  it('migrates an empty database once when several stores open at once', async () => {
    const fresh = await server.createDatabase();
    const stores = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore({ url: fresh, poolSize: 2 })));
    try {
      for (const s of stores) await s.ping();
      const ns = freshNamespace();
      assert.equal(await stores[0]?.countEvents(ns), 0);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  describe('change channel', () => {
    let a: PostgresStore;
    let b: PostgresStore;
    before(async () => {
      a = await openPostgresStore({ url, poolSize: 2 });
      b = await openPostgresStore({ url, poolSize: 2 });
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    it('tells another store of a key revocation, a registry version and a purge', async () => {
      const tenant = freshTenant();
      const key = makeKey(tenant);
      await a.insertKey(key);
      const revoked = nextChange(b, (c) => c.kind === 'key_revoked' && c.id === key.id);
      assert.equal(await a.revokeKey(key.id, 5), true);
      assert.deepEqual(await revoked, { kind: 'key_revoked', id: key.id });

      const registry = nextChange(b, (c) => c.kind === 'registry' && c.tenant === tenant);
      await a.appendRegistryVersion({ id: 'ev_reg1', tenant, recordedAt: 10, predicates: [] });
      assert.deepEqual(await registry, { kind: 'registry', tenant });

      const ns = `${tenant}:a`;
      const purged = nextChange(b, (c) => c.kind === 'purged' && c.namespace === ns);
      await a.purgeNamespace(ns);
      assert.deepEqual(await purged, { kind: 'purged', namespace: ns });
    });

    it('keeps one initial registry version when two stores seed a tenant at once', async () => {
      const tenant = freshTenant();
      const seed = (id: string) => ({ id, tenant, recordedAt: 0, predicates: [] });
      await Promise.all([a.appendRegistryVersion(seed('ev_seed_a')), b.appendRegistryVersion(seed('ev_seed_b'))]);
      assert.equal((await a.registryVersions(tenant)).length, 1);
    });

    it('stores every replacement two stores make at the same ms, each at its own time', async () => {
      const tenant = freshTenant();
      await a.appendRegistryVersion({ id: 'ev_seed_l', tenant, recordedAt: 0, predicates: [] });
      const at = 1_000_000;
      const stored = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? a : b).appendRegistryVersion(
            { id: `ev_late_${i}`, tenant, recordedAt: at, predicates: [] },
            { later: true },
          ),
        ),
      );
      const times = stored.map((v) => v.recordedAt).sort((x, y) => x - y);
      assert.deepEqual(
        times,
        [0, 1, 2, 3, 4, 5, 6, 7].map((i) => at + i),
      );
      assert.deepEqual(
        (await a.registryVersions(tenant)).map((v) => v.recordedAt),
        [0, ...times],
      );
    });
  });

  it('answers 503 unavailable while the database is down, reconnects its channel and resyncs after', async () => {
    const own = await startPostgres();
    const store = await openPostgresStore({ url: await own.createDatabase(), poolSize: 2 });
    try {
      const resync = nextChange(store, (c) => c.kind === 'resync');
      await own.halt();
      await assert.rejects(store.ping(), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'unavailable');
        assert.ok(!err.message.includes(own.password), 'no password in the error');
        return true;
      });
      await own.start();
      assert.deepEqual(await resync, { kind: 'resync' });
      await store.ping();
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it('issues a higher epoch than any before after the store reopens, a purge, and a restart of the database', async () => {
    const own = await startPostgres();
    const dbUrl = await own.createDatabase();
    let store = await openPostgresStore({ url: dbUrl, poolSize: 2 });
    try {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 1000);
      const other = await held(store, freshNamespace());
      await store.close();
      // The memory server restarted: a new store on the same database.
      store = await openPostgresStore({ url: dbUrl, poolSize: 2 });
      const b = await held(store, ns, 'pod-b', 1000, a.expiresAt);
      assert.ok(b.epoch > Math.max(a.epoch, other.epoch), `${b.epoch} > ${a.epoch}, ${other.epoch}`);
      await store.purgeNamespace(ns);
      assert.equal(await store.getLease(ns), null);
      await store.close();
      // PostgreSQL itself restarted (fast shutdown): the epoch sequence is durable.
      await own.halt();
      await own.start();
      store = await openPostgresStore({ url: dbUrl, poolSize: 2 });
      const c = await held(store, ns, 'pod-c', 1000, b.expiresAt);
      assert.ok(c.epoch > b.epoch, `${c.epoch} > ${b.epoch}`);
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it('names host and port, never the password, when the database cannot be reached at open', async () => {
    const bad = `postgres://tether:s3cretpw@127.0.0.1:1/none`;
    await assert.rejects(openPostgresStore({ url: bad }), (err: Error) => {
      assert.match(err.message, /127\.0\.0\.1:1/);
      assert.ok(!err.message.includes('s3cretpw'));
      return true;
    });
  });
});
