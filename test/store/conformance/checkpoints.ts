/**
 * Conformance: LangGraph checkpoints and pending writes as resume records — stored only under the live
 * epoch (a stale writer stores nothing), a put replaces one of the same key, a regular pending write
 * keeps the first and a special one (idx < 0) the last, reads page newest first within a thread,
 * a thread's deletion spans its checkpoint namespaces and no other thread, export/import carry both
 * kinds, and a purge erases them.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { CheckpointRecord, CheckpointWriteRecord } from '../../../src/store/checkpoint-types.ts';
import type { ResumeRecordLine } from '../../../src/store/resume-types.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace } from './helpers.ts';
import { fenceOf, held, T0 } from './resume-helpers.ts';

function makeCheckpoint(
  ns: string,
  thread: string,
  id: string,
  over: Partial<CheckpointRecord> = {},
): CheckpointRecord {
  return {
    namespace: ns,
    threadId: thread,
    checkpointNs: '',
    checkpointId: id,
    parentCheckpointId: null,
    type: 'json',
    checkpoint: Buffer.from(`{"id":"${id}"}`).toString('base64'),
    metadataType: 'json',
    metadata: Buffer.from('{"step":1}').toString('base64'),
    at: T0,
    epoch: 1,
    ...over,
  };
}

function makeWrite(c: CheckpointRecord, taskId: string, idx: number, value: string): CheckpointWriteRecord {
  return {
    namespace: c.namespace,
    threadId: c.threadId,
    checkpointNs: c.checkpointNs,
    checkpointId: c.checkpointId,
    taskId,
    idx,
    channel: idx < 0 ? '__error__' : 'animals',
    type: 'json',
    value: Buffer.from(JSON.stringify(value)).toString('base64'),
    taskPath: '',
    at: T0,
    epoch: c.epoch,
  };
}

const decoded = (w: CheckpointWriteRecord) => JSON.parse(Buffer.from(w.value, 'base64').toString('utf8'));

/**
 * Declares the checkpoint conformance tests.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function checkpointsConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('checkpoints (LangGraph) as resume records', () => {
    it('stores a checkpoint and its writes under the live epoch and reads them back', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const c = makeCheckpoint(ns, 't1', 'c1', { epoch: lease.epoch, checkpointNs: 'child' });
      const got = await store.writeResume(fenceOf(lease), [
        { kind: 'put_checkpoint', checkpoint: c },
        { kind: 'put_checkpoint_writes', namespace: ns, writes: [makeWrite(c, 'task', 0, 'dog')] },
      ]);
      assert.deepEqual(got, {
        ok: true,
        value: [{ kind: 'put_checkpoint' }, { kind: 'put_checkpoint_writes', stored: 1 }],
      });
      assert.deepEqual(await store.checkpoints({ namespace: ns, threadId: 't1', limit: 10 }), [c]);
      const writes = await store.checkpointWrites(ns, [c]);
      assert.deepEqual(writes.map(decoded), ['dog']);
      assert.deepEqual(
        await store.checkpoints({ namespace: freshNamespace(), limit: 10 }),
        [],
        'another namespace sees none',
      );
    });

    it('stores nothing from a stale epoch: lost after a later acquire, nothing of either kind written', async () => {
      const ns = freshNamespace();
      const first = await held(store, ns, 'pod-a', 1000);
      const second = await held(store, ns, 'pod-b', 60_000, T0 + 2000);
      assert.ok(second.epoch > first.epoch);
      const stale = makeCheckpoint(ns, 't', 'c-stale', { epoch: first.epoch });
      const got = await store.writeResume(fenceOf(first, T0 + 2001), [
        { kind: 'put_checkpoint', checkpoint: stale },
        { kind: 'put_checkpoint_writes', namespace: ns, writes: [makeWrite(stale, 'task', 0, 'x')] },
      ]);
      assert.equal(got.ok, false);
      assert.equal(!got.ok && got.reason, 'lost');
      assert.deepEqual(await store.checkpoints({ namespace: ns, limit: 10 }), []);
      assert.deepEqual(await store.checkpointWrites(ns, [stale]), []);
      const refused = await store.writeResume(fenceOf(first, T0 + 2001), [
        { kind: 'delete_thread', namespace: ns, threadId: 't' },
      ]);
      assert.equal(refused.ok, false);
    });

    it('replaces a checkpoint of the same key; keeps the first regular write and the last special one', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const fence = fenceOf(lease);
      const c = makeCheckpoint(ns, 't', 'c', { epoch: lease.epoch });
      await store.writeResume(fence, [{ kind: 'put_checkpoint', checkpoint: c }]);
      const again = { ...c, metadata: Buffer.from('{"step":2}').toString('base64') };
      await store.writeResume(fence, [{ kind: 'put_checkpoint', checkpoint: again }]);
      assert.deepEqual(await store.checkpoints({ namespace: ns, limit: 10 }), [again]);
      for (const v of ['first', 'second']) {
        const got = await store.writeResume(fence, [
          {
            kind: 'put_checkpoint_writes',
            namespace: ns,
            writes: [makeWrite(c, 'task', 0, v), makeWrite(c, 'task', -1, v)],
          },
        ]);
        assert.ok(got.ok);
      }
      const writes = (await store.checkpointWrites(ns, [c])).sort((a, b) => a.idx - b.idx);
      assert.deepEqual(
        writes.map((w) => [w.idx, decoded(w)]),
        [
          [-1, 'second'],
          [0, 'first'],
        ],
      );
    });

    it('reads newest first within a thread, with before, id and keyset pages', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const ids = ['a1', 'a2', 'a3'];
      for (const thread of ['t1', 't2']) {
        for (const id of ids) {
          await store.writeResume(fenceOf(lease), [
            { kind: 'put_checkpoint', checkpoint: makeCheckpoint(ns, thread, id, { epoch: lease.epoch }) },
          ]);
        }
      }
      const key = (c: CheckpointRecord) => `${c.threadId}/${c.checkpointId}`;
      const all = await store.checkpoints({ namespace: ns, limit: 10 });
      assert.deepEqual(all.map(key), ['t2/a3', 't2/a2', 't2/a1', 't1/a3', 't1/a2', 't1/a1']);
      const before = await store.checkpoints({ namespace: ns, threadId: 't1', before: 'a3', limit: 10 });
      assert.deepEqual(before.map(key), ['t1/a2', 't1/a1']);
      const one = await store.checkpoints({ namespace: ns, threadId: 't2', checkpointId: 'a2', limit: 10 });
      assert.deepEqual(one.map(key), ['t2/a2']);
      const page1 = await store.checkpoints({ namespace: ns, limit: 4 });
      const page2 = await store.checkpoints({ namespace: ns, limit: 4, after: page1[3] });
      assert.deepEqual([...page1, ...page2].map(key), all.map(key));
    });

    it("deletes a thread's checkpoints and writes in every checkpoint_ns, and no other thread's", async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const root = makeCheckpoint(ns, 'gone', 'c1', { epoch: lease.epoch });
      const child = makeCheckpoint(ns, 'gone', 'c2', { epoch: lease.epoch, checkpointNs: 'sub' });
      const kept = makeCheckpoint(ns, 'kept', 'c1', { epoch: lease.epoch });
      await store.writeResume(fenceOf(lease), [
        { kind: 'put_checkpoint', checkpoint: root },
        { kind: 'put_checkpoint', checkpoint: child },
        { kind: 'put_checkpoint', checkpoint: kept },
        {
          kind: 'put_checkpoint_writes',
          namespace: ns,
          writes: [makeWrite(root, 't', 0, 'a'), makeWrite(kept, 't', 0, 'b')],
        },
      ]);
      const got = await store.writeResume(fenceOf(lease), [{ kind: 'delete_thread', namespace: ns, threadId: 'gone' }]);
      assert.deepEqual(got, { ok: true, value: [{ kind: 'delete_thread', deleted: 3 }] });
      assert.deepEqual(await store.checkpoints({ namespace: ns, limit: 10 }), [kept]);
      assert.equal((await store.checkpointWrites(ns, [root, kept])).length, 1);
    });

    it('exports both kinds, imports them into another store state unchanged (repeats skipped), purge erases them', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const c = makeCheckpoint(ns, 't', 'c', { epoch: lease.epoch });
      await store.writeResume(fenceOf(lease), [
        { kind: 'put_checkpoint', checkpoint: c },
        { kind: 'put_checkpoint_writes', namespace: ns, writes: [makeWrite(c, 'task', 0, 'dog')] },
      ]);
      const lines: ResumeRecordLine[] = [];
      for await (const line of store.exportResume({ namespace: ns })) lines.push(line);
      const mine = lines.filter((l) => l.kind === 'checkpoint' || l.kind === 'checkpoint_write');
      assert.deepEqual(
        mine.map((l) => l.kind),
        ['checkpoint', 'checkpoint_write'],
      );
      await store.purgeNamespace(ns);
      assert.deepEqual(await store.checkpoints({ namespace: ns, limit: 10 }), [], 'purged');
      assert.deepEqual(await store.checkpointWrites(ns, [c]), []);
      assert.equal(await store.importResume(mine), 2);
      assert.equal(await store.importResume(mine), 0, 'a repeated import is skipped');
      assert.deepEqual(await store.checkpoints({ namespace: ns, limit: 10 }), [c]);
      assert.deepEqual((await store.checkpointWrites(ns, [c])).map(decoded), ['dog']);
    });
  });
}
