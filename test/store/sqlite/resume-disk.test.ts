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
  it("leaves no byte of the namespace's working state, turns, outputs, milestones or pointers on disk", async () => {
    const dir = join(root, 'purge');
    const store = openSqliteStore({ dataDir: dir });
    const gone = freshNamespace();
    const kept = freshNamespace();
    const mark = `zqxresume${randomBytes(8).toString('hex')}`;
    const keptMark = `zqxresume${randomBytes(8).toString('hex')}`;
    for (const [ns, m] of [
      [gone, mark],
      [kept, keptMark],
    ] as const) {
      const lease = await held(store, ns);
      const fence = fenceOf(lease, T0);
      for (let i = 0; i < 50; i++) {
        await store.writeResume(fence, [
          { kind: 'working_state', state: makeState(ns, i + 1, { goal: `${m} goal ${i}`, epoch: lease.epoch }) },
          { kind: 'milestone', milestone: makeMilestone(ns, `${m} milestone ${i}`, lease.epoch) },
          {
            kind: 'turn',
            turn: makeTurn(ns, { content: `${m} turn ${i}`, messageId: `${m}-${i}`, epoch: lease.epoch }),
          },
          {
            kind: 'output',
            output: makeOutput(ns, `out_${m}_${i}`, { content: `${m} output ${i}`, epoch: lease.epoch }),
          },
          {
            kind: 'put_pointer',
            pointer: makePointer(ns, `${m}-${i}`, { fields: { uri: `${m}://x` }, epoch: lease.epoch }),
          },
        ]);
      }
    }
    assert.ok(filesContaining(dir, mark).length > 0, 'the marker is on disk before the purge');
    await store.purgeNamespace(gone);
    assert.deepEqual(filesContaining(dir, mark), [], 'while open');
    assert.equal(await store.countTurns(kept), 50);
    await store.close();
    assert.deepEqual(filesContaining(dir, mark), [], 'after close');
    assert.ok(filesContaining(dir, keptMark).length > 0, 'the other namespace is still on disk');
  });
});
