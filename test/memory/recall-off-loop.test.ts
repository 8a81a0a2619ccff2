/**
 * `as_of` reads on a SQLite file store fold inside the read workers (issue 21, point 3): the answers
 * are the ones the same reads folded on the event loop give (single and multi facts, retractions,
 * back-dated values, searches with superseded hits, filters, the cap), the
 * fold is counted by the pool and not on this thread, and ten at once take one worker lane at a time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { MemoryEngine, type WriteContext } from '../../src/memory/engine.ts';
import { LOG_FOLD_MODULE } from '../../src/memory/log-fold.ts';
import { MemoryReader, type RecallQuery } from '../../src/memory/recall.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { ACTOR, MINUTE, NAMESPACE, refused, T0 } from './helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-off-loop-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** The same store without its off-loop folds: `recall.ts` folds on this thread, page by page. */
function foldingHere(store: SqliteStore): Store {
  return new Proxy(store, {
    get(target, name) {
      if (name === 'offLoopFolds') return undefined;
      const v = Reflect.get(target, name, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Store;
}

/** One store for every test here (they only read). */
async function filled() {
  const store = openSqliteStore({ dataDir: join(root, 'store'), foldModule: LOG_FOLD_MODULE });
  const clock = new ManualClock(T0);
  const registries = new RegistryBook(store, clock, starterRegistry('personal'));
  const engine = new MemoryEngine({ store, registries, clock });
  const ctx: WriteContext = { namespace: NAMESPACE, actor: ACTOR };
  for (let i = 0; i < 6; i++) {
    await engine.remember(ctx, [
      { subject: 'alice', predicate: 'lives_in', value: `alpha city ${i}` },
      { subject: 'alice', predicate: 'note', value: `alpha note ${i}`, confidence: i % 2 ? 0.5 : 0.9 },
      { subject: `bob${i % 3}`, predicate: 'note', value: `alpha bob ${i}` },
      { subject: 'carol', predicate: 'allergy', value: `alpha ${['peanuts', 'shellfish', 'dust'][i % 3]}` },
    ]);
    clock.advance(MINUTE);
    if (i === 3) {
      await engine.forget(ctx, { subject: 'alice', predicate: 'note', value: 'alpha note 1' });
      await engine.forget(ctx, { subject: 'carol', predicate: 'allergy' });
    }
  }
  // back-dated into the middle of alice's homes, and many values of one note fact (several log pages)
  await engine.remember(ctx, [
    { subject: 'alice', predicate: 'lives_in', value: 'alpha backdated', observedAt: T0 + 2 * MINUTE + 1 },
  ]);
  for (let b = 0; b < 5; b++) {
    await engine.remember(
      ctx,
      Array.from({ length: 1000 }, (_, i) => ({ subject: 'proj', predicate: 'note', value: `alpha proj ${b} ${i}` })),
    );
    clock.advance(MINUTE);
  }
  return { store, clock, registries };
}

describe('MemoryReader as_of on a SQLite file store', () => {
  let s: Awaited<ReturnType<typeof filled>>;
  before(async () => {
    s = await filled();
  });
  after(() => s.store.close());

  it('answers as the fold on the event loop does, and folds in the read workers', async () => {
    const { store, clock, registries } = s;
    const pooled = new MemoryReader({ store, registries, clock });
    const here = new MemoryReader({ store: foldingHere(store), registries, clock });
    const queries: RecallQuery[] = [];
    for (const asOf of [T0 - 1, T0, T0 + 2 * MINUTE, T0 + 2 * MINUTE + 1, T0 + 4 * MINUTE, clock.now()]) {
      const base = { namespace: NAMESPACE, asOf, limit: 1000 };
      queries.push(
        base,
        { ...base, limit: 3 },
        { ...base, subject: 'alice', predicate: 'lives_in' },
        { ...base, subject: 'alice', predicate: 'note' },
        { ...base, subject: 'carol' },
        { ...base, q: 'alpha' },
        { ...base, q: 'alpha', limit: 7 },
        { ...base, q: 'alpha city' },
        { ...base, q: 'peanuts' },
        { ...base, q: 'alpha', subject: 'alice' },
        { ...base, q: 'alpha', minConfidence: 0.8 },
        { ...base, q: 'proj', limit: 1000 },
        { ...base, kind: 'fact', predicate: 'note' },
      );
    }
    const foldsBefore = store.pooledFolds;
    let nonEmpty = 0;
    for (const q of queries) {
      const expected = await here.recall(q);
      if (expected.length > 0) nonEmpty++;
      assert.deepEqual(await pooled.recall(q), expected, JSON.stringify(q));
    }
    assert.ok(nonEmpty > queries.length / 2, `most reads found something (${nonEmpty}/${queries.length})`);
    assert.equal(store.pooledFolds - foldsBefore, queries.length, 'every pooled as_of read folded in a worker');
    // spot checks against what was written
    const homes = await pooled.recall({
      namespace: NAMESPACE,
      subject: 'alice',
      predicate: 'lives_in',
      asOf: T0 + 2 * MINUTE + 1,
      limit: 10,
    });
    assert.deepEqual(
      homes.map((b) => b.event.value),
      ['alpha backdated'],
    );
    const proj = await pooled.recall({ namespace: NAMESPACE, q: 'proj', asOf: clock.now(), limit: 1000 });
    assert.equal(proj.length, 1000);
    assert.equal(proj[0]?.event.value, 'alpha proj 4 999', 'newest first');
  });

  it('refuses in the worker, before reading, a fold past maxScanEvents', async () => {
    const { store, clock, registries } = s;
    const reader = new MemoryReader({ store, registries, clock, maxScanEvents: 4000 });
    const folds = store.pooledFolds;
    await refused(reader.recall({ namespace: NAMESPACE, q: 'proj', asOf: clock.now(), limit: 10 }), 'as_of');
    await refused(reader.recall({ namespace: NAMESPACE, asOf: clock.now(), limit: 10 }), 'as_of');
    assert.equal(store.pooledFolds - folds, 2);
    const alice = await reader.recall({ namespace: NAMESPACE, subject: 'alice', asOf: clock.now(), limit: 100 });
    assert.ok(alice.length > 0);
  });

  it('queues ten concurrent folds in one lane of the pool', async () => {
    const { store, clock, registries } = s;
    const reader = new MemoryReader({ store, registries, clock });
    const asOf = clock.now();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => reader.recall({ namespace: NAMESPACE, q: 'alpha', asOf, limit: 1000 })),
    );
    for (const a of answers) assert.deepEqual(a, answers[0]);
    assert.equal(answers[0]?.length, 1000);
    assert.equal(store.pooledFoldPeak, 1, 'the 2-worker pool ran one fold at a time');
  });
});
