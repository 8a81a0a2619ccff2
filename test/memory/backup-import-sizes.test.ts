/**
 * An import's chunks are sized by the time the one before held the writer (issue 21,
 * src/common/chunk-sizer.ts): each holds it about `SLICE_MS` whatever an event costs. Times are
 * told to the sizer (here by a double of the engine's `held` report), never measured by the test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ImportedEvent, importBackup } from '../../src/memory/backup-import.ts';
import type { StoredEvent } from '../../src/store/store.ts';
import { MINUTE, NAMESPACE, setup } from './helpers.ts';

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
