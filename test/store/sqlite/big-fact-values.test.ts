/**
 * The SQLite value lookup of big facts (009-big-fact-values.sql): a fact past 64 beliefs is listed by
 * value (by triggers on beliefs), a smaller one is not, and both answer a writer's head of one value
 * as the fact's beliefs say; the lists follow retractions and a purge leaves nothing of the fact.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ManualClock } from '../../../src/common/clock.ts';
import { MemoryEngine, type WriteContext } from '../../../src/memory/engine.ts';
import { starterRegistry } from '../../../src/memory/registry.ts';
import { RegistryBook } from '../../../src/memory/registry-book.ts';
import { openSqliteStore, type SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';

const T0 = Date.UTC(2026, 0, 1);
const tempRoot = mkdtempSync(join(tmpdir(), 'tether-bigfacts-'));
after(() => rmSync(tempRoot, { recursive: true, force: true }));

async function setup(t: { after: (fn: () => Promise<void> | void) => void }) {
  const dir = mkdtempSync(join(tempRoot, 'db-'));
  const store = openSqliteStore({ dataDir: dir, readWorkers: 0 });
  const raw = new Database(join(dir, 'tether.db'), { readonly: true });
  t.after(async () => {
    raw.close();
    await store.close();
  });
  const clock = new ManualClock(T0);
  const engine = new MemoryEngine({
    store,
    registries: new RegistryBook(store, clock, starterRegistry('personal')),
    clock,
  });
  const ctx: WriteContext = {
    namespace: 'acme:big',
    actor: { tenant: 'acme', agent: 'big', session: null, keyId: null },
  };
  const count = (sql: string) => raw.prepare(sql).pluck().get() as number;
  const listed = () => ({
    facts: count('SELECT count(*) FROM big_facts'),
    values: count('SELECT count(*) FROM big_fact_values'),
  });
  const notes = async (subject: string, n: number, from = 0) => {
    const statements = Array.from({ length: n }, (_, i) => ({ subject, predicate: 'note', value: `note ${from + i}` }));
    clock.advance(1000);
    await engine.remember(ctx, statements);
  };
  return { store, engine, ctx, clock, listed, notes };
}

/** The head of one value next to the fact's beliefs holding it. */
async function headAgrees(store: SqliteStore, ns: string, subject: string, valueKey: string) {
  const one = await store.factHead(ns, subject, 'note', valueKey);
  const all = await store.factHead(ns, subject, 'note');
  const ids = (h: typeof one) => h.beliefs.map((b) => b.event.id);
  assert.deepEqual(ids(one), ids({ ...all, beliefs: all.beliefs.filter((b) => b.event.valueKey === valueKey) }));
  return one.beliefs.length;
}

describe('SQLite big fact values', () => {
  it('lists a fact past 64 beliefs only, and both kinds answer a head of one value', async (t) => {
    const { store, ctx, listed, notes } = await setup(t);
    await notes('small', 64);
    assert.deepEqual(listed(), { facts: 0, values: 0 }, '64 beliefs: not big');
    await notes('large', 60);
    await notes('large', 40, 60);
    assert.deepEqual(listed(), { facts: 1, values: 100 }, 'the 65th belief lists the fact and all its values');
    for (const subject of ['small', 'large']) {
      assert.equal(await headAgrees(store, ctx.namespace, subject, 'note 7'), 1);
      assert.equal(await headAgrees(store, ctx.namespace, subject, 'note 999'), 0);
    }
  });

  it('follows retractions: one value, then all of them', async (t) => {
    const { store, engine, ctx, clock, listed, notes } = await setup(t);
    await notes('large', 80);
    clock.advance(1000);
    await engine.forget(ctx, { subject: 'large', predicate: 'note', value: 'note 3' });
    assert.deepEqual(listed(), { facts: 1, values: 79 });
    assert.equal(await headAgrees(store, ctx.namespace, 'large', 'note 3'), 0);
    // Stated again: believed again, listed again.
    await notes('large', 1, 3);
    assert.equal(await headAgrees(store, ctx.namespace, 'large', 'note 3'), 1);
    clock.advance(1000);
    await engine.forget(ctx, { subject: 'large', predicate: 'note' });
    assert.deepEqual(listed(), { facts: 0, values: 0 }, 'a fact holding nothing is no longer listed');
  });

  it('a purge leaves nothing of a big fact', async (t) => {
    const { store, ctx, listed, notes } = await setup(t);
    await notes('large', 70);
    assert.deepEqual(listed(), { facts: 1, values: 70 });
    await store.purgeNamespace(ctx.namespace);
    assert.deepEqual(listed(), { facts: 0, values: 0 });
  });
});
