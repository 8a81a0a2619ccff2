/**
 * The batching writer and the "now" projection: whatever mix of writes arrives, concurrently and
 * back-dated, the beliefs the store answers with are exactly what folding the whole log gives.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { MemoryEngine, type WriteContext } from '../../src/memory/engine.ts';
import { foldFact } from '../../src/memory/fold.ts';
import { MemoryReader } from '../../src/memory/recall.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const T0 = Date.UTC(2026, 0, 1);
const NS = 'acme:w';
const ctx: WriteContext = { namespace: NS, actor: { tenant: 'acme', agent: 'w', session: null, keyId: null } };

function setup(t: TestContext) {
  const store = openSqliteStore({ dataDir: ':memory:' });
  t.after(() => store.close());
  const clock = new ManualClock(T0);
  const registries = new RegistryBook(store, clock, starterRegistry('personal'));
  const engine = new MemoryEngine({ store, registries, clock });
  const reader = new MemoryReader({ store, registries, clock });
  return { store, clock, registries, engine, reader };
}

/** A small seeded PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('MemoryWriter', () => {
  it('stores a value once when many concurrent requests restate it (one batch)', async (t) => {
    const { engine, store } = setup(t);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Oslo' }])),
    );
    assert.equal(results.filter((r) => r[0]?.stored).length, 1);
    assert.equal(results.filter((r) => r[0]?.alreadyKnown).length, 19);
    assert.equal((await store.groupEvents(NS, [{ subject: 'u', predicate: 'lives_in' }])).length, 1);
  });

  it('answers superseded in arrival order inside one batch', async (t) => {
    const { engine } = setup(t);
    const [a, b, c] = await Promise.all(
      ['Oslo', 'Rome', 'Oslo'].map((value) => engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value }])),
    );
    assert.deepEqual(a?.[0]?.superseded, []);
    assert.deepEqual(b?.[0]?.superseded, ['Oslo']);
    assert.deepEqual(c?.[0]?.superseded, ['Rome']);
  });

  for (const seed of [1, 2, 3, 4, 5]) {
    it(`keeps the projection equal to a full fold under random concurrent, back-dated writes (seed ${seed})`, async (t) => {
      const { engine, reader, store, clock, registries } = setup(t);
      const rand = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
      const subjects = ['a', 'b', 'c'];
      const predicates = ['lives_in', 'allergy'] as const; // single, multi
      const values = ['x', 'y', 'z', 'w'];
      for (let round = 0; round < 30; round++) {
        const ops = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => {
          const subject = pick(subjects);
          const predicate = pick(predicates);
          const r = rand();
          if (r < 0.15) return engine.forget(ctx, { subject, predicate });
          if (r < 0.3) return engine.forget(ctx, { subject, predicate, value: pick(values) });
          // a third of the assertions are back-dated into the past, some to exactly the same ms
          const observedAt = r < 0.55 ? clock.now() - Math.floor(rand() * 5) * 1000 : undefined;
          return engine.remember(ctx, [{ subject, predicate, value: pick(values), observedAt }]);
        });
        await Promise.all(ops);
        clock.advance(Math.floor(rand() * 3) * 1000);
      }
      const registry = await registries.current('acme');
      for (const subject of subjects) {
        for (const predicate of predicates) {
          const log = await store.groupEvents(NS, [{ subject, predicate }]);
          const expected = foldFact(log, registry.find(predicate)!.cardinality);
          const got = await reader.recall({ namespace: NS, subject, predicate, limit: 100 });
          const shape = (bs: typeof got) =>
            bs.map((b) => ({ id: b.event.id, replaced: b.replaced })).sort((x, y) => (x.id < y.id ? -1 : 1));
          assert.deepEqual(shape(got), shape(expected), `${subject}/${predicate}`);
        }
      }
    });
  }

  for (const seed of [99, 7, 13]) {
    it(`imports a random history in shuffled chunks into the same beliefs a full fold gives (seed ${seed})`, async (t) => {
      const a = setup(t);
      const rand = prng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
      for (let i = 0; i < 300; i++) {
        const subject = pick(['a', 'b']);
        const predicate = pick(['lives_in', 'allergy']);
        if (rand() < 0.2)
          await a.engine.forget(ctx, { subject, predicate, ...(rand() < 0.5 ? { value: pick(['x', 'y']) } : {}) });
        else {
          const observedAt = rand() < 0.3 ? a.clock.now() - 5000 : undefined;
          await a.engine.remember(ctx, [{ subject, predicate, value: pick(['x', 'y', 'z']), observedAt }]);
        }
        a.clock.advance(Math.floor(rand() * 2) * 1000);
      }
      const events = await a.store.exportEvents({ namespace: NS, limit: 10_000 });
      const shuffled = [...events].sort(() => rand() - 0.5);
      const b = setup(t);
      let inserted = 0;
      for (let i = 0; i < shuffled.length; i += 37) inserted += await b.engine.importEvents(shuffled.slice(i, i + 37));
      assert.equal(inserted, events.length);
      assert.equal(await b.engine.importEvents(events.slice(0, 50)), 0, 'ids already present are skipped');
      for (const subject of ['a', 'b']) {
        for (const predicate of ['lives_in', 'allergy']) {
          const want = await a.reader.recall({ namespace: NS, subject, predicate, limit: 100 });
          const got = await b.reader.recall({ namespace: NS, subject, predicate, limit: 100 });
          const shape = (bs: typeof got) =>
            bs.map((x) => ({ id: x.event.id, replaced: x.replaced })).sort((p, q) => (p.id < q.id ? -1 : 1));
          assert.deepEqual(shape(got), shape(want), `${subject}/${predicate}`);
        }
      }
    });
  }

  it('rebuilds the projection after an import', async (t) => {
    const a = setup(t);
    await a.engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Oslo' }]);
    await a.engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Rome' }]);
    const events = await a.store.exportEvents({ namespace: NS, limit: 100 });
    const b = setup(t);
    assert.equal(await b.engine.importEvents(events), 2);
    const got = await b.reader.recall({ namespace: NS, q: 'rome', limit: 10 });
    assert.deepEqual(
      got.map((x) => [x.event.value, x.replaced.map((r) => r.value)]),
      [['Rome', ['Oslo']]],
    );
    assert.deepEqual(await b.reader.recall({ namespace: NS, q: 'oslo', limit: 10 }), []);
  });

  it('lets writes queued on the next event-loop turns join the same commit', async (t) => {
    const { engine } = setup(t);
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const writes: Promise<unknown>[] = [];
    // As requests read by successive poll phases would: one per turn of the event loop.
    for (const subject of ['a', 'b', 'c']) {
      writes.push(engine.remember(ctx, [{ subject, predicate: 'lives_in', value: 'Oslo' }]));
      await nextTurn();
    }
    await Promise.all(writes);
    assert.deepEqual(engine.writeStats, { batches: 1, jobs: 3, folds: 0 });
    // A turn that brings nothing ends the wait: a lone write is committed on the turn after it queued
    // (its own, plus one that brought nothing), not held for every extra turn allowed.
    let done = false;
    const lone = engine.remember(ctx, [{ subject: 'd', predicate: 'lives_in', value: 'Oslo' }]).then(() => {
      done = true;
    });
    let turns = 0;
    while (!done) {
      await nextTurn();
      turns++;
    }
    await lone;
    assert.ok(turns <= 3, `committed after ${turns} turns`);
    assert.deepEqual(engine.writeStats, { batches: 2, jobs: 4, folds: 0 });
  });

  it('writes a batch as one store operation that reads the heads of all its facts', async (t) => {
    const { engine, store } = setup(t);
    await engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Oslo' }]);
    const calls = { factHead: 0, writeFacts: 0, heads: 0 };
    const { factHead, writeFacts } = store;
    store.factHead = (...args) => {
      calls.factHead++;
      return factHead.apply(store, args);
    };
    store.writeFacts = function spy<T>(...args: Parameters<typeof writeFacts<T>>) {
      calls.writeFacts++;
      calls.heads += args[0].heads.length;
      return writeFacts.apply(store, args) as Promise<T>;
    };
    const results = await Promise.all([
      engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Rome' }]),
      engine.remember(ctx, [{ subject: 'u', predicate: 'prefers', value: 'tea' }]),
      engine.remember(ctx, [
        { subject: 'v', predicate: 'prefers', value: 'tea' },
        { subject: 'v', predicate: 'prefers', value: 'coffee' },
      ]),
      engine.forget(ctx, { subject: 'u', predicate: 'lives_in' }),
    ]);
    // u/lives_in (all beliefs: single), u/prefers=tea, v/prefers=tea, v/prefers=coffee.
    assert.deepEqual(calls, { factHead: 0, writeFacts: 1, heads: 4 });
    assert.deepEqual(results[0], [
      { stored: true, alreadyKnown: false, superseded: ['Oslo'], event: results[0]?.[0]?.event },
    ]);
  });

  it('purges after the writes queued before it, and none of them writes to the namespace afterwards', async (t) => {
    const { engine, store, reader } = setup(t);
    await engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Oslo' }]);
    // A store that answers reads later than it does (as a networked one would): the batch's read and
    // its commit are then in different turns, and a purge could run between them.
    const { factHeads } = store;
    store.factHeads = async (requests) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return factHeads.call(store, requests);
    };
    const write = engine.remember(ctx, [{ subject: 'u', predicate: 'lives_in', value: 'Rome' }]);
    await new Promise<void>((resolve) => setImmediate(resolve)); // the write is queued (its batch may be reading)
    const erased = await engine.purgeNamespace(NS);
    await write;
    assert.equal(erased, 2);
    assert.deepEqual(await store.exportEvents({ namespace: NS, limit: 10 }), []);
    assert.deepEqual(await reader.recall({ namespace: NS, subject: 'u', limit: 10 }), []);
  });

  it("stores other namespaces' writes while a purge runs, and holds the purged namespace's until it ends", async (t) => {
    const { engine, store } = setup(t);
    for (let i = 0; i < 6; i++) {
      await engine.remember(
        ctx,
        Array.from({ length: 500 }, (_, j) => ({ subject: `s${j}`, predicate: 'note', value: `n ${i} ${j}` })),
      );
    }
    const other: WriteContext = { ...ctx, namespace: 'acme:other' };
    const order: string[] = [];
    const purge = engine.purgeNamespace(NS).then(() => order.push('purge'));
    // once the store has committed a first purge step, one write to each namespace is asked
    const start = store.purgeStats.deletes;
    for (let turns = 0; store.purgeStats.deletes === start && turns < 100_000; turns++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    assert.ok(store.purgeStats.deletes > start, 'the purge is under way');
    const same = engine
      .remember(ctx, [{ subject: 'u', predicate: 'note', value: 'after' }])
      .then(() => order.push('same'));
    const elsewhere = engine
      .remember(other, [{ subject: 'u', predicate: 'note', value: 'meanwhile' }])
      .then(() => order.push('other'));
    await Promise.all([purge, same, elsewhere]);
    assert.deepEqual(order, ['other', 'purge', 'same']);
    const left = await store.exportEvents({ namespace: NS, limit: 10 });
    assert.deepEqual(
      left.map((e) => e.value),
      ['after'],
    );
    assert.equal((await store.exportEvents({ namespace: 'acme:other', limit: 10 })).length, 1);
  });
});
