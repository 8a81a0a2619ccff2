/**
 * The SQLite resume tables on disk: epochs keep growing across a close and reopen (a restart), the
 * records survive it, and a purge leaves no byte of a namespace's resume records in any file.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Fence } from '../../../src/store/resume-types.ts';
import { openSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import { freshNamespace } from '../conformance/helpers.ts';
import {
  fenceOf,
  held,
  makeMilestone,
  makeOutput,
  makePointer,
  makeState,
  makeTurn,
  T0,
} from '../conformance/resume-helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-resume-disk-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Names of files under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const bytes = Buffer.from(needle, 'utf8');
  return (readdirSync(dir, { recursive: true }) as string[]).filter((name) => {
    const path = join(dir, name);
    return statSync(path).isFile() && readFileSync(path).includes(bytes);
  });
}

describe('SqliteStore leases across a restart', () => {
  it('issues a higher epoch after close and reopen than any before, and keeps the records', async () => {
    const dir = join(root, 'restart');
    const ns = freshNamespace();
    const first = openSqliteStore({ dataDir: dir });
    const a = await held(first, ns, 'pod-a', 1000);
    const b = await held(first, freshNamespace());
    await first.writeResume(fenceOf(a), [{ kind: 'working_state', state: makeState(ns, 1, { epoch: a.epoch }) }]);
    await first.close();

    const second = openSqliteStore({ dataDir: dir });
    try {
      assert.deepEqual(await second.getLease(ns), a);
      const c = await held(second, ns, 'pod-c', 1000, a.expiresAt);
      assert.ok(c.epoch > Math.max(a.epoch, b.epoch));
      assert.deepEqual(await second.workingState(ns), makeState(ns, 1, { epoch: a.epoch }));
    } finally {
      await second.close();
    }
  });
});

describe('SqliteStore.purgeNamespace and resume records', () => {
  // No VACUUM (issue 21): the rows go in short steps, and the tables that held them are rebuilt
  // (table-rebuild.ts) because a b-tree page that a balance rebuilt keeps old copies of moved cells.
  it("leaves no byte of the namespace's lease, working state, turns, outputs, milestones, pointers or checkpoints on disk", async () => {
    const dir = join(root, 'purge');
    const store = openSqliteStore({ dataDir: dir });
    const gone = freshNamespace();
    const kept = freshNamespace();
    const mark = `zqxresume${randomBytes(8).toString('hex')}`;
    const keptMark = `zqxresume${randomBytes(8).toString('hex')}`;
    const fences = new Map<string, Fence>();
    for (const [ns, m] of [
      [gone, mark],
      [kept, keptMark],
    ] as const) {
      // The marker in the holder too: a lease row is erased like any record.
      fences.set(ns, fenceOf(await held(store, ns, `pod-${m}`), T0));
    }
    // Both namespaces' rows interleaved, so they share pages; an output large enough for overflow pages.
    for (let i = 0; i < 50; i++) {
      for (const [ns, m] of [
        [gone, mark],
        [kept, keptMark],
      ] as const) {
        const fence = fences.get(ns) as Fence;
        const epoch = fence.epoch;
        await store.writeResume(fence, [
          { kind: 'working_state', state: makeState(ns, i + 1, { goal: `${m} goal ${i}`, epoch }) },
          { kind: 'milestone', milestone: makeMilestone(ns, `${m} milestone ${i}`, epoch) },
          { kind: 'turn', turn: makeTurn(ns, { content: `${m} turn ${i}`, messageId: `${m}-${i}`, epoch }) },
          {
            kind: 'output',
            output: makeOutput(ns, `out_${m}_${i}`, {
              content: i % 10 === 0 ? `${m} big output `.repeat(1000) : `${m} output ${i}`,
              epoch,
            }),
          },
          { kind: 'put_pointer', pointer: makePointer(ns, `${m}-${i}`, { fields: { uri: `${m}://x` }, epoch }) },
          {
            kind: 'put_checkpoint',
            checkpoint: {
              namespace: ns,
              threadId: `${m}-thread`,
              checkpointNs: '',
              checkpointId: `${m}-${i}`,
              parentCheckpointId: null,
              type: 'json',
              checkpoint: Buffer.from(`{"id":"${m}-${i}"}`).toString('base64'),
              metadataType: 'json',
              metadata: Buffer.from('{"step":1}').toString('base64'),
              at: T0,
              epoch,
            },
          },
        ]);
      }
    }
    try {
      assert.ok(filesContaining(dir, mark).length > 0, 'the marker is on disk before the purge');
      await store.purgeNamespace(gone);
      assert.deepEqual(filesContaining(dir, mark), [], 'while open');
      assert.ok(
        store.purgeStats.rebuilds >= 7,
        `the tables that held its rows were rebuilt: ${store.purgeStats.rebuilds}`,
      );
      assert.equal(await store.countTurns(kept), 50);
      assert.equal(await store.countOutputs(kept), 50);
    } finally {
      await store.close(); // a failed assertion must not leave the store's threads running
    }
    assert.deepEqual(filesContaining(dir, mark), [], 'after close');
    assert.ok(filesContaining(dir, keptMark).length > 0, 'the other namespace is still on disk');
  });
});
