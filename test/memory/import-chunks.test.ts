/**
 * An import's chunks are sized by the time the one before held the writer (issue 21,
 * src/memory/import-chunks.ts): each holds it about `SLICE_MS` whatever an event costs. Times are
 * told to the sizer (here by a double of the engine's `held` report), never measured by the test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ImportedEvent, importBackup } from '../../src/memory/backup-import.ts';
import { ChunkSizer } from '../../src/memory/import-chunks.ts';
import type { StoredEvent } from '../../src/store/store.ts';
import { MINUTE, NAMESPACE, setup } from './helpers.ts';

describe('ChunkSizer', () => {
  it('fits the next chunk to the budget at the median cost of the last three, growing at most twice, within 1..max', () => {
    const sizer = new ChunkSizer({ max: 250, budgetMs: 4 });
    assert.equal(sizer.size, 32);
    sizer.took(32, 16); // 0.5 ms an event
    assert.equal(sizer.size, 8);
    sizer.took(8, 0.5); // cheap now (the lower of two costs): at most twice the last
    assert.equal(sizer.size, 16);
    sizer.took(16, 0);
    assert.equal(sizer.size, 32);
    for (let i = 0; i < 5; i++) sizer.took(sizer.size, 0);
    assert.equal(sizer.size, 250, 'never past max');
    sizer.took(250, 5000);
    assert.equal(sizer.size, 250, 'one slow chunk (a preempted process) is not the cost');
    sizer.took(250, 5000);
    assert.equal(sizer.size, 1, 'two of three are: never below one');
    sizer.took(0, 10);
    assert.equal(sizer.size, 1, 'an empty chunk says nothing');
    assert.equal(new ChunkSizer({ max: 7, budgetMs: 4 }).size, 7);
  });

  it('refuses a max below 1 and a budget that is not positive, naming them', () => {
    assert.throws(() => new ChunkSizer({ max: 0, budgetMs: 4 }), /'max' must be ≥ 1: got 0/);
    assert.throws(() => new ChunkSizer({ max: 10, budgetMs: 0 }), /'budgetMs' must be > 0: got 0/);
  });
});

describe('importBackup chunk sizes', () => {
  /** An export of `NAMESPACE` with `n` notes, then a fresh store (its clock past them) to import into. */
  async function exported(t: Parameters<typeof setup>[0], n: number) {
    const source = setup(t);
    const statements = Array.from({ length: n }, (_, i) => ({
      subject: `p${i % 5}`,
      predicate: 'note',
      value: `n ${i}`,
    }));
    await source.engine.remember(source.ctx, statements);
    const events = await source.store.exportEvents({ namespace: NAMESPACE, limit: 10_000 });
    const target = setup(t);
    target.clock.advance(100 * MINUTE);
    return { events, target, lines: events.map((event, i): ImportedEvent => ({ at: `line ${i + 1}`, event })) };
  }

  it('sizes each chunk by the time the one before held the writer', async (t) => {
    const { events, target, lines } = await exported(t, 120);
    const sizes: number[] = [];
    // Each chunk is reported to have held the writer 1 ms an event: 4 events fit a 4 ms slice.
    const engine = {
      importEvents: (e: StoredEvent[], options: { held?: (ms: number) => void } = {}) => {
        sizes.push(e.length);
        return target.engine.importEvents(e, { held: () => options.held?.(e.length) });
      },
    };
    const out = await importBackup({ ...target, engine }, { versions: [], events: lines }, { sliceMs: 4 });
    assert.deepEqual(out, { imported: 120, skipped: 0, registryVersions: 0 });
    assert.deepEqual(sizes, [32, ...Array.from({ length: 22 }, () => 4)]);
    assert.deepEqual(await target.store.exportEvents({ namespace: NAMESPACE, limit: 10_000 }), events);
  });

  it('grows chunks while they are cheap, up to the most per transaction', async (t) => {
    const { target, lines } = await exported(t, 300);
    const sizes: number[] = [];
    const engine = {
      importEvents: (e: StoredEvent[], options: { held?: (ms: number) => void } = {}) => {
        sizes.push(e.length);
        return target.engine.importEvents(e, { held: () => options.held?.(0) });
      },
    };
    await importBackup({ ...target, engine }, { versions: [], events: lines }, { chunk: 100 });
    assert.deepEqual(sizes, [32, 64, 100, 100, 4]);
  });

  it("reports the writer's real hold to the sizer: every chunk was timed, none past the most", async (t) => {
    const { target, lines } = await exported(t, 200);
    const held: number[] = [];
    const engine = {
      importEvents: (e: StoredEvent[], options: { held?: (ms: number) => void } = {}) =>
        target.engine.importEvents(e, {
          held: (ms) => {
            held.push(ms);
            options.held?.(ms);
          },
        }),
    };
    const out = await importBackup({ ...target, engine }, { versions: [], events: lines });
    assert.equal(out.imported, 200);
    assert.ok(held.length >= 3, `at least 32 + 64 + 104: ${held.length} chunks`);
    assert.ok(held.every((ms) => ms >= 0));
  });
});
