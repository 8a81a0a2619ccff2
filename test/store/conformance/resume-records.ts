/**
 * Conformance: resume records under a fence — each kind is written only with the live epoch (a stale,
 * lapsed or absent lease stores nothing of any kind), working-state versions are conditional, turns
 * dedupe on message id, reads page as documented, export/import carry the records, purge erases them.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { ResumeRecordLine, ResumeWrite } from '../../../src/store/resume-types.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace, freshTenant } from './helpers.ts';
import { fenceOf, held, makeMilestone, makeOutput, makePointer, makeState, makeTurn, T0 } from './resume-helpers.ts';

/** One write of every kind for `ns`, stamped with `epoch`. */
function everyKind(ns: string, epoch: number, tag: string): ResumeWrite[] {
  return [
    { kind: 'working_state', state: makeState(ns, 1, { epoch, goal: tag }) },
    { kind: 'milestone', milestone: makeMilestone(ns, `m-${tag}`, epoch) },
    { kind: 'turn', turn: makeTurn(ns, { epoch, content: tag }) },
    { kind: 'output', output: makeOutput(ns, `out_${tag}`, { epoch }) },
    { kind: 'put_pointer', pointer: makePointer(ns, `p-${tag}`, { epoch }) },
  ];
}

/** Everything a namespace holds, for before/after comparisons. */
async function contents(store: Store, ns: string) {
  const outputs = await store.outputs(ns, 100);
  return {
    state: await store.workingState(ns),
    history: await store.workingStateHistory(ns, 100),
    milestones: await store.milestones(ns, 100),
    turns: await store.turns({ namespace: ns, limit: 100 }),
    outputs: await Promise.all(outputs.map((o) => store.output(ns, o.ref))),
    pointers: await store.pointers(ns, 1000),
  };
}

/**
 * Declares the resume-record conformance tests.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function resumeRecordsConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.writeResume fencing', () => {
    it('stores every kind with the live epoch and answers each write in order', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const got = await store.writeResume(fenceOf(lease), everyKind(ns, lease.epoch, 'a'));
      assert.deepEqual(got, {
        ok: true,
        value: [
          { kind: 'working_state', version: 1 },
          { kind: 'milestone', seq: 1 },
          { kind: 'turn', seq: 1, duplicate: false },
          { kind: 'output', ref: 'out_a' },
          { kind: 'put_pointer' },
        ],
      });
      const c = await contents(store, ns);
      assert.deepEqual(c.state, makeState(ns, 1, { epoch: lease.epoch, goal: 'a' }));
      assert.deepEqual(c.milestones, [{ ...makeMilestone(ns, 'm-a', lease.epoch), seq: 1 }]);
      assert.deepEqual(c.turns, [{ ...makeTurn(ns, { epoch: lease.epoch, content: 'a' }), seq: 1 }]);
      assert.deepEqual(c.outputs, [makeOutput(ns, 'out_a', { epoch: lease.epoch })]);
      assert.deepEqual(c.pointers, [makePointer(ns, 'p-a', { epoch: lease.epoch })]);
    });

    it('stores nothing of any kind from a writer whose lease another holder took over', async () => {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 1000);
      const b = await held(store, ns, 'pod-b', 60_000, a.expiresAt);
      const kinds = everyKind(ns, a.epoch, 'stale');
      for (const w of [...kinds, { kind: 'delete_pointer' as const, namespace: ns, name: 'p-b' }]) {
        assert.deepEqual(await store.writeResume(fenceOf(a, a.expiresAt + 1), [w]), {
          ok: false,
          reason: 'lost',
          lease: b,
        });
      }
      assert.deepEqual(await contents(store, ns), {
        state: null,
        history: [],
        milestones: [],
        turns: [],
        outputs: [],
        pointers: [],
      });
      assert.equal((await store.writeResume(fenceOf(b, a.expiresAt + 1), everyKind(ns, b.epoch, 'b'))).ok, true);
      assert.equal((await store.workingState(ns))?.goal, 'b');
    });

    it('refuses a lapsed lease with lost and a namespace without a lease with not_held', async () => {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 1000);
      assert.deepEqual(await store.writeResume(fenceOf(a, a.expiresAt), everyKind(ns, a.epoch, 'late')), {
        ok: false,
        reason: 'lost',
        lease: a,
      });
      const none = freshNamespace();
      assert.deepEqual(await store.writeResume({ namespace: none, epoch: a.epoch, now: T0 }, everyKind(none, 1, 'x')), {
        ok: false,
        reason: 'not_held',
        lease: null,
      });
      assert.equal(await store.workingState(ns), null);
      assert.equal(await store.countTurns(none), 0);
    });

    it('refuses a write of another namespace than the fence', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      await assert.rejects(store.writeResume(fenceOf(lease), everyKind(freshNamespace(), lease.epoch, 'x')));
    });
  });

  describe('Store working-state versions', () => {
    it('stores a version only on the latest one, all-or-none with the rest of the batch', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns);
      const fence = fenceOf(lease);
      assert.equal((await store.writeResume(fence, [{ kind: 'working_state', state: makeState(ns, 1) }])).ok, true);
      const stale = await store.writeResume(fence, [
        { kind: 'turn', turn: makeTurn(ns) },
        { kind: 'working_state', state: makeState(ns, 1, { goal: 'lost update' }) },
      ]);
      assert.deepEqual(stale, { ok: false, reason: 'conflict', lease });
      assert.equal(await store.countTurns(ns), 0);
      assert.equal((await store.writeResume(fence, [{ kind: 'working_state', state: makeState(ns, 2) }])).ok, true);
      assert.equal((await store.writeResume(fence, [{ kind: 'working_state', state: makeState(ns, 3) }])).ok, true);
      assert.deepEqual(await store.workingState(ns), makeState(ns, 3));
      const versions = (rs: { version: number }[]) => rs.map((r) => r.version);
      assert.deepEqual(versions(await store.workingStateHistory(ns, 10)), [3, 2, 1]);
      assert.deepEqual(versions(await store.workingStateHistory(ns, 1, 3)), [2]);
    });
  });

  describe('Store turns, milestones, outputs, pointers', () => {
    it('stores a repeated message id once (its output neither) and answers with the first seq', async () => {
      const ns = freshNamespace();
      const fence = fenceOf(await held(store, ns));
      const first = await store.writeResume(fence, [{ kind: 'turn', turn: makeTurn(ns, { messageId: 'm1' }) }]);
      const again = await store.writeResume(fence, [
        {
          kind: 'turn',
          turn: makeTurn(ns, { messageId: 'm1', outputRef: 'out_dup' }),
          output: makeOutput(ns, 'out_dup'),
        },
      ]);
      assert.deepEqual(first, { ok: true, value: [{ kind: 'turn', seq: 1, duplicate: false }] });
      assert.deepEqual(again, { ok: true, value: [{ kind: 'turn', seq: 1, duplicate: true }] });
      assert.equal(await store.countTurns(ns), 1);
      assert.equal(await store.output(ns, 'out_dup'), null);
      const other = await store.writeResume(fence, [{ kind: 'turn', turn: makeTurn(ns, { messageId: 'm2' }) }]);
      assert.deepEqual(other, { ok: true, value: [{ kind: 'turn', seq: 2, duplicate: false }] });
    });

    it('pages turns backwards by seq, oldest first within a page', async () => {
      const ns = freshNamespace();
      const fence = fenceOf(await held(store, ns));
      const writes = Array.from({ length: 7 }, (_, i) => ({
        kind: 'turn' as const,
        turn: makeTurn(ns, { content: `t${i + 1}` }),
      }));
      await store.writeResume(fence, writes);
      const seqs = async (limit: number, beforeSeq?: number) =>
        (await store.turns({ namespace: ns, limit, beforeSeq })).map((t) => t.seq);
      assert.deepEqual(await seqs(3), [5, 6, 7]);
      assert.deepEqual(await seqs(3, 5), [2, 3, 4]);
      assert.deepEqual(await seqs(3, 2), [1]);
      assert.equal(await store.countTurns(ns), 7);
    });

    it('keeps milestones in order, lists outputs newest first without content, replaces and deletes pointers', async () => {
      const ns = freshNamespace();
      const fence = fenceOf(await held(store, ns));
      await store.writeResume(fence, [
        { kind: 'milestone', milestone: makeMilestone(ns, 'one') },
        { kind: 'milestone', milestone: makeMilestone(ns, 'two') },
        { kind: 'milestone', milestone: makeMilestone(ns, 'three') },
        { kind: 'output', output: makeOutput(ns, 'out_1', { content: 'ü'.repeat(10) }) },
        { kind: 'output', output: makeOutput(ns, 'out_2') },
        { kind: 'put_pointer', pointer: makePointer(ns, 'repo') },
        { kind: 'put_pointer', pointer: makePointer(ns, 'repo', { type: 'object', fields: { uri: 's3://b/k' } }) },
        { kind: 'put_pointer', pointer: makePointer(ns, 'env') },
      ]);
      assert.deepEqual(
        (await store.milestones(ns, 2)).map((m) => [m.seq, m.name]),
        [
          [2, 'two'],
          [3, 'three'],
        ],
      );
      const listed = await store.outputs(ns, 10);
      assert.deepEqual(
        listed.map((o) => o.ref),
        ['out_2', 'out_1'],
      );
      assert.equal(listed[1]?.bytes, 20);
      assert.ok(listed.every((o) => !('content' in o)));
      assert.equal(await store.countOutputs(ns), 2);
      assert.deepEqual(
        (await store.pointers(ns, 100)).map((p) => [p.name, p.type]),
        [
          ['env', 'git_ref'],
          ['repo', 'object'],
        ],
      );
      // The list cursors (the routes' `next`): below a seq, below a ref, after a name.
      assert.deepEqual(
        (await store.milestones(ns, 1, 3)).map((m) => m.name),
        ['two'],
      );
      assert.deepEqual(
        (await store.outputs(ns, 10, 'out_2')).map((o) => o.ref),
        ['out_1'],
      );
      assert.deepEqual(
        (await store.pointers(ns, 1)).map((p) => p.name),
        ['env'],
      );
      assert.deepEqual(
        (await store.pointers(ns, 10, 'env')).map((p) => p.name),
        ['repo'],
      );
      const del = await store.writeResume(fence, [
        { kind: 'delete_pointer', namespace: ns, name: 'env' },
        { kind: 'delete_pointer', namespace: ns, name: 'env' },
      ]);
      assert.deepEqual(del, {
        ok: true,
        value: [
          { kind: 'delete_pointer', deleted: true },
          { kind: 'delete_pointer', deleted: false },
        ],
      });
      assert.deepEqual(
        (await store.pointers(ns, 100)).map((p) => p.name),
        ['repo'],
      );
    });
  });

  describe('Store resume export, import and purge', () => {
    it("exports a namespace's records (not another's), imports them back after a purge, skips repeats", async () => {
      const tenant = freshTenant();
      const ns = `${tenant}:run-1`;
      const other = `${tenant}:run-2`;
      const lease = await held(store, ns);
      await store.writeResume(fenceOf(lease), everyKind(ns, lease.epoch, 'x'));
      await store.writeResume(fenceOf(lease), [{ kind: 'turn', turn: makeTurn(ns, { messageId: 'mid' }) }]);
      const otherLease = await held(store, other);
      await store.writeResume(fenceOf(otherLease), everyKind(other, otherLease.epoch, 'y'));
      const before = await contents(store, ns);

      const lines: ResumeRecordLine[] = [];
      for await (const line of store.exportResume({ namespace: ns })) lines.push(line);
      assert.deepEqual(
        lines.map((l) => l.kind),
        ['working_state', 'milestone', 'turn', 'turn', 'output', 'pointer'],
      );
      assert.ok(lines.every((l) => l.record.namespace === ns));
      let byTenant = 0;
      for await (const line of store.exportResume({ tenant })) if (line.record.namespace === other) byTenant += 1;
      assert.equal(byTenant, 5);

      await store.purgeNamespace(ns);
      assert.deepEqual(await contents(store, ns), {
        state: null,
        history: [],
        milestones: [],
        turns: [],
        outputs: [],
        pointers: [],
      });
      assert.equal(await store.countOutputs(ns), 0);
      assert.equal((await contents(store, other)).turns.length, 1, 'the other namespace keeps its records');

      assert.equal(await store.importResume(lines), lines.length);
      assert.deepEqual(await contents(store, ns), before);
      assert.equal(await store.importResume(lines), 0);
      const fresh = await held(store, ns);
      assert.ok(fresh.epoch > otherLease.epoch);
    });
  });
}
