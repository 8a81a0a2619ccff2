/**
 * The writer with a store that allows several writes at once (`Store.writeConcurrency`, PostgreSQL):
 * batches overlap up to that number and no more, and an exclusive job (an import) waits for the
 * batches in flight and holds the next ones back. The store here is SQLite with a gate in front of
 * `writeFacts`, so the test decides when each write goes on.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { MemoryEngine, type WriteContext } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const T0 = Date.UTC(2026, 0, 1);
const NS = 'acme:c';
const ctx: WriteContext = { namespace: NS, actor: { tenant: 'acme', agent: 'c', session: null, keyId: null } };
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await nextTurn();
  assert.ok(cond(), 'condition not reached');
}

/** An engine on a store that allows `concurrency` writes, each held until the test releases it. */
function setup(t: TestContext, concurrency: number) {
  const store = openSqliteStore({ dataDir: ':memory:' });
  t.after(() => store.close());
  Object.defineProperty(store, 'writeConcurrency', { value: concurrency });
  const held: (() => void)[] = [];
  const seen = { active: 0, peak: 0, calls: 0 };
  const { writeFacts } = store;
  // SQLite itself writes one at a time: the gated calls go on to it in turn.
  let chain: Promise<unknown> = Promise.resolve();
  store.writeFacts = async function gated<T>(...args: Parameters<typeof writeFacts<T>>): Promise<T> {
    seen.calls++;
    seen.active++;
    seen.peak = Math.max(seen.peak, seen.active);
    try {
      await new Promise<void>((resolve) => held.push(resolve));
      const next = chain.then(() => writeFacts.apply(store, args) as Promise<T>);
      chain = next.catch(() => {});
      return await next;
    } finally {
      seen.active--;
    }
  };
  const clock = new ManualClock(T0);
  const engine = new MemoryEngine({
    store,
    registries: new RegistryBook(store, clock, starterRegistry('personal')),
    clock,
  });
  const releaseAll = () => {
    for (const r of held.splice(0)) r();
  };
  return { store, engine, seen, held, releaseAll };
}

describe('MemoryWriter with a store that allows concurrent writes', () => {
  it('writes up to writeConcurrency batches at once, and no more', async (t) => {
    const { engine, seen, held, releaseAll } = setup(t, 3);
    const writes: Promise<unknown>[] = [];
    // Each write queued after the batches before it started: each starts a batch of its own while room is left.
    for (const subject of ['a', 'b', 'c', 'd', 'e']) {
      writes.push(engine.remember(ctx, [{ subject, predicate: 'lives_in', value: 'Oslo' }]));
      const before = seen.calls;
      await until(() => seen.calls > before || seen.active >= 3);
    }
    await until(() => held.length === 3);
    for (let i = 0; i < 5; i++) await nextTurn();
    assert.equal(seen.active, 3, 'three batches in flight');
    // The writes queued meanwhile wait for room, then go as one batch.
    while (seen.calls < 4 || held.length > 0) {
      releaseAll();
      await nextTurn();
    }
    await Promise.all(writes);
    assert.equal(seen.peak, 3);
    assert.deepEqual(engine.writeStats, { batches: 4, jobs: 5, folds: 0 });
  });

  it('runs an import after the batches in flight and before the batches queued after it', async (t) => {
    const { engine, store, seen, held, releaseAll } = setup(t, 2);
    const order: string[] = [];
    const first = engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Oslo' }]).then(() => {
      order.push('remember before');
    });
    await until(() => held.length === 1);
    const imported = engine
      .importEvents([
        {
          id: 'evt_import_1',
          namespace: NS,
          tenant: 'acme',
          subject: 'v',
          predicate: 'lives_in',
          value: 'Rome',
          valueKey: 'rome',
          retraction: false,
          kind: null,
          confidence: 1,
          source: null,
          evidence: null,
          observedAt: T0,
          recordedAt: T0,
          actor: ctx.actor,
        },
      ])
      .then(() => order.push('import'));
    await nextTurn();
    const after = engine.remember(ctx, [{ subject: 'w', predicate: 'lives_in', value: 'Oslo' }]).then(() => {
      order.push('remember after');
    });
    for (let i = 0; i < 10; i++) await nextTurn();
    // The import waits for the batch in flight, and the later write for the import, though room is left.
    assert.equal(seen.active, 1);
    assert.deepEqual(order, []);
    while (order.length < 3) {
      releaseAll();
      await nextTurn();
    }
    await Promise.all([first, imported, after]);
    assert.deepEqual(order, ['remember before', 'import', 'remember after']);
    assert.equal(seen.peak, 1);
    assert.equal(await store.countEvents(NS), 3);
  });
});
