/**
 * Registry changes on two `tether memory --store postgres` replicas (real processes) on one real
 * PostgreSQL: a cardinality change answers and rebuilds beliefs without hanging the replica that made
 * it (its own change notification once deadlocked it, fact locks held), and changes made at once
 * through both replicas are all stored, in order.
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

/** A registry as PUT takes it: GET's predicates without the null fields. */
function putBody(predicates: Record<string, unknown>[]): Record<string, unknown>[] {
  const fields = ['name', 'cardinality', 'value_type', 'allowed', 'aliases', 'description'];
  return predicates.map((p) =>
    Object.fromEntries(Object.entries(p).filter(([k, v]) => v !== null && fields.includes(k))),
  );
}

/** Resolves with `work`'s result, or rejects after `ms` (a hung replica fails the test, not the run). */
async function answered<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('registry changes on two replicas of one PostgreSQL', () => {
  let pg: TestPostgres;
  let a: Replica;
  let b: Replica;
  const admin = newAdminKey();
  const agent = () => freshAgent(a, admin, 'g');
  const values = (r: { body: { beliefs: { value: unknown }[] } }) => r.body.beliefs.map((x) => x.value);

  before(async () => {
    ({ pg, a, b } = await startReplicaPair(admin));
  });
  after(() => stopReplicaPair({ pg, a, b }));

  it('changes a predicate from multi to single: 200, beliefs rebuilt, writes go on on both replicas', async () => {
    const { tenant, key } = await agent();
    const t0 = Date.now() - 10_000;
    for (const [i, value] of ['nuts', 'milk'].entries()) {
      const w = await a.call('POST', '/v1/memories', key, {
        subject: 'user',
        predicate: 'allergy',
        value,
        observed_at: t0 + i,
      });
      assert.equal(w.status, 200, JSON.stringify(w.body));
    }
    assert.deepEqual(values(await b.call('GET', '/v1/memories?subject=user&predicate=allergy', key)).sort(), [
      'milk',
      'nuts',
    ]);
    const reg = await a.call('GET', `/v1/registry?tenant=${tenant}`, admin);
    const predicates = putBody(reg.body.predicates).map((p) =>
      p.name === 'allergy' ? { ...p, cardinality: 'single' } : p,
    );

    const put = await answered(10_000, a.call('PUT', '/v1/registry', admin, { tenant, predicates }));
    assert.equal(put.status, 200, JSON.stringify(put.body));
    // Rebuilt: the newest value alone is believed, on both replicas.
    for (const r of [a, b]) {
      assert.deepEqual(
        values(await answered(5000, r.call('GET', '/v1/memories?subject=user&predicate=allergy', key))),
        ['milk'],
      );
    }
    // A keeps answering, and the fact's locks were let go: B can write the same fact.
    const onA = await answered(
      5000,
      a.call('POST', '/v1/memories', key, { subject: 'bob', predicate: 'name', value: 'Bob' }),
    );
    assert.equal(onA.status, 200, JSON.stringify(onA.body));
    await within(2000, async () => {
      const r = await answered(5000, b.call('GET', `/v1/registry?tenant=${tenant}`, admin));
      return r.body.predicates.find((p: { name: string }) => p.name === 'allergy')?.cardinality === 'single';
    });
    const onB = await answered(
      5000,
      b.call('POST', '/v1/memories', key, { subject: 'user', predicate: 'allergy', value: 'eggs' }),
    );
    assert.equal(onB.status, 200, JSON.stringify(onB.body));
    assert.deepEqual(onB.body.superseded, ['milk']);
    assert.deepEqual(values(await a.call('GET', '/v1/memories?subject=user&predicate=allergy', key)), ['eggs']);
  });

  it('stores every one of concurrent registry changes through both replicas, in order', async () => {
    const { tenant, key } = await agent();
    assert.equal(
      (await a.call('POST', '/v1/memories', key, { subject: 'u', predicate: 'note', value: 'x' })).status,
      200,
    );
    const reg = await a.call('GET', `/v1/registry?tenant=${tenant}`, admin);
    for (let round = 0; round < 10; round++) {
      const puts = await Promise.all(
        [a, b, a, b].map((r, i) => {
          const predicates = putBody(reg.body.predicates).map((p) =>
            p.name === 'note' ? { ...p, description: `round ${round} put ${i}` } : p,
          );
          return r.call('PUT', '/v1/registry', admin, { tenant, predicates });
        }),
      );
      assert.deepEqual(
        puts.map((p) => p.status),
        [200, 200, 200, 200],
        JSON.stringify(puts.find((p) => p.status !== 200)?.body),
      );
    }
    const exported = await (
      await fetch(`${a.url}/v1/events?namespace=${tenant}:run`, { headers: { authorization: `Bearer ${admin}` } })
    ).text();
    const times = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => 'registry_version' in l)
      .map((l) => Date.parse(l.registry_version.recorded_at));
    assert.equal(times.length, 41); // the initial version and 40 changes
    assert.deepEqual(
      times,
      [...new Set(times)].sort((x, y) => x - y),
      'distinct times, oldest first',
    );
  });
});
