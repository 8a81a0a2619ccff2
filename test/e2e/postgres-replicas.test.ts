/**
 * Two `tether memory --store postgres` replicas (real processes) on one real PostgreSQL: one truth.
 * Read-your-writes across them, concurrent remembers stored once, concurrent values of one single
 * fact leaving exactly the newest, search across replicas, and revocations and registry changes
 * applied on the other replica within 1 s (the key cache TTL is 30 s: only the notification can), and
 * one lease holder per epoch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  freshAgent,
  newAdminKey,
  type Replica,
  startReplicaPair,
  stopReplicaPair,
  within,
} from '../helpers/memory-replicas.ts';
import type { TestPostgres } from '../helpers/postgres.ts';

describe('two memory replicas on one PostgreSQL', () => {
  let pg: TestPostgres;
  let a: Replica;
  let b: Replica;
  const admin = newAdminKey();
  /** A fresh tenant (and an agent key of it) for one test. */
  const agent = () => freshAgent(a, admin, 'r');

  before(async () => {
    ({ pg, a, b } = await startReplicaPair(admin));
  });
  after(() => stopReplicaPair({ pg, a, b }));

  it('prints the database URL with the password masked', () => {
    for (const r of [a, b]) {
      assert.match(r.output(), /Store: PostgreSQL postgres:\/\/tether:\*\*\*@127\.0\.0\.1:\d+\//);
      assert.ok(!r.output().includes(pg.password), 'the password is never printed');
    }
  });

  it('reads on B what was written on A, at once', async () => {
    const { key } = await agent();
    const w = await a.call('POST', '/v1/memories', key, { subject: 'user', predicate: 'lives_in', value: 'Oslo' });
    assert.equal(w.status, 200);
    const r = await b.call('GET', '/v1/memories?subject=user&predicate=lives_in', key);
    assert.deepEqual(
      r.body.beliefs.map((x: { value: unknown }) => x.value),
      ['Oslo'],
    );
  });

  it('stores 200 concurrent remembers split over both replicas, each once', async () => {
    const { key } = await agent();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? a : b).call('POST', '/v1/memories', key, { subject: `s${i % 7}`, predicate: 'note', value: `n${i}` }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 200),
    );
    const exported = await fetch(`${b.url}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
    const events = (await exported.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => !('registry_version' in l)); // the tenant's rules come before its first event
    assert.equal(events.length, 200);
    assert.equal(new Set(events.map((e) => e.value)).size, 200);
    const ids = results.map((r) => r.body.event.id);
    assert.deepEqual(new Set(events.map((e) => e.id)), new Set(ids));
  });

  it('leaves exactly one current value, the newest, after concurrent new values of single facts', async () => {
    const { key } = await agent();
    const base = Date.now() - 10_000;
    const subjects = Array.from({ length: 30 }, (_, i) => `user${i}`);
    // Rounds of two new values of each fact, one through each replica, all in flight at once: without
    // a per-fact lock both replicas read the same head and each keeps its own value as current.
    for (let round = 0; round < 4; round++) {
      const writes = await Promise.all(
        subjects.flatMap((subject, i) =>
          [a, b].map((r, side) =>
            r.call('POST', '/v1/memories', key, {
              subject,
              predicate: 'lives_in',
              value: `city${round}-${side}`,
              // Which side is newer alternates with the subject and the round.
              observed_at: base + round * 10 + ((side + i + round) % 2),
            }),
          ),
        ),
      );
      assert.ok(writes.every((w) => w.status === 200));
    }
    const newest = (i: number) => `city3-${(i + 3) % 2 === 1 ? 0 : 1}`; // side s is newer when (s + i + 3) % 2 === 1
    for (const r of [a, b]) {
      const got = await r.call('GET', '/v1/memories?predicate=lives_in&limit=100', key);
      const bySubject = new Map<string, unknown[]>();
      for (const x of got.body.beliefs as { subject: string; value: unknown }[]) {
        bySubject.set(x.subject, [...(bySubject.get(x.subject) ?? []), x.value]);
      }
      assert.deepEqual(
        subjects.map((s) => bySubject.get(s)),
        subjects.map((_, i) => [newest(i)]),
      );
    }
    const history = await a.call('GET', '/v1/memories/history?subject=user0&predicate=lives_in', key);
    assert.equal(history.body.events.length, 8);
  });

  it('finds on B by search what A wrote', async () => {
    const { key } = await agent();
    await a.call('POST', '/v1/memories', key, { subject: 'user', predicate: 'note', value: 'prefers Zanzibar coffee' });
    const found = await b.call('GET', '/v1/memories?q=zanzibar', key);
    assert.deepEqual(
      found.body.beliefs.map((x: { value: unknown }) => x.value),
      ['prefers Zanzibar coffee'],
    );
  });

  it('refuses on B within 1 s a key revoked on A', async () => {
    const { key } = await agent();
    assert.equal((await b.call('GET', '/v1/whoami', key)).status, 200); // B caches the key (TTL 30 s)
    const id = key.slice(4, 20);
    assert.equal((await a.call('DELETE', `/v1/keys/${id}`, admin)).status, 204);
    const took = await within(1000, async () => {
      const r = await b.call('GET', '/v1/whoami', key);
      return r.status === 401 && r.body.error.code === 'key_revoked';
    });
    assert.ok(took <= 1000, `refused after ${took} ms`);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    assert.match(metrics, /tether_store_notifications_total\{kind="key_revoked"\} [1-9]/);
  });

  it('applies on B within 1 s a registry change made on A', async () => {
    const { tenant, key } = await agent();
    const before = await b.call('GET', '/v1/registry', key); // B caches the tenant's registry
    const refused = await b.call('POST', '/v1/memories', key, { subject: 'u', predicate: 'shoe_size', value: 44 });
    assert.equal(refused.status, 400);
    // Only the fields PUT takes, without nulls (GET also answers e.g. `allowed: null`).
    const known = (before.body.predicates as Record<string, unknown>[]).map((p) =>
      Object.fromEntries(
        Object.entries(p).filter(
          ([k, v]) =>
            v !== null && ['name', 'cardinality', 'value_type', 'allowed', 'aliases', 'description'].includes(k),
        ),
      ),
    );
    const predicates = [
      ...known,
      { name: 'shoe_size', cardinality: 'single', value_type: 'number', description: 'EU size' },
    ];
    const put = await a.call('PUT', `/v1/registry?tenant=${tenant}`, admin, { tenant, predicates });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const took = await within(1000, async () => {
      const r = await b.call('POST', '/v1/memories', key, { subject: 'u', predicate: 'shoe_size', value: 44 });
      return r.status === 200;
    });
    assert.ok(took <= 1000, `applied after ${took} ms`);
  });

  it('gives one holder per epoch to 100 concurrent lease acquires over both replicas', async () => {
    const { key } = await agent();
    let lastEpoch = 0;
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          (i % 2 ? a : b).call('POST', '/v1/lease/acquire', key, { holder: `h${round}-${i}`, ttl_ms: 60_000 }),
        ),
      );
      const won = answers.filter((r) => r.status === 200);
      assert.equal(won.length, 1, JSON.stringify(answers.map((r) => r.status)));
      const lease = won[0]?.body;
      assert.ok(lease.epoch > lastEpoch, 'epochs only grow');
      lastEpoch = lease.epoch;
      for (const r of answers.filter((x) => x.status !== 200)) {
        assert.equal(r.status, 409);
        assert.equal(r.body.error.code, 'lease_held');
      }
      // Released on the other replica than the one that granted it: the next round starts free.
      const released = await a.call('POST', '/v1/lease/release', key, { epoch: lease.epoch });
      assert.equal(released.status, 200, JSON.stringify(released.body));
    }
  });
});
