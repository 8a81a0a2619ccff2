/**
 * The resume records engine: working-state merge and versions, milestones setting last_milestone,
 * turns (message-id dedupe, large content moved to an output), the 1 MiB output limit, pointers, and
 * the lease errors of writes without or with a stale epoch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_OUTPUT_BYTES } from '../../../src/memory/resume/records.ts';
import { estimateTokens } from '../../../src/memory/resume/tokens.ts';
import { NAMESPACE } from '../helpers.ts';
import { failsWith, setupResume } from './helpers.ts';

describe('ResumeRecords.patchWorkingState', () => {
  it('merges the named fields into a new version and keeps the earlier ones', async (t) => {
    const { records, leases, clock } = setupResume(t);
    const { epoch } = await leases.acquire(NAMESPACE, 'pod-a');
    const scope = { namespace: NAMESPACE, epoch };
    const v1 = await records.patchWorkingState(scope, { goal: 'ship', plan: ['a', 'b'], step: 1 });
    clock.advance(10);
    const v2 = await records.patchWorkingState(scope, { step: 2, focus: 'b', plan: ['b'] });
    assert.equal(v1.version, 1);
    assert.deepEqual(
      { version: v2.version, goal: v2.goal, plan: v2.plan, step: v2.step, focus: v2.focus, updatedAt: v2.updatedAt },
      { version: 2, goal: 'ship', plan: ['b'], step: 2, focus: 'b', updatedAt: v1.updatedAt + 10 },
    );
    const v3 = await records.patchWorkingState(scope, { focus: null });
    assert.equal(v3.focus, null);
    assert.deepEqual(
      (await records.workingStateHistory(NAMESPACE, 10)).map((s) => s.version),
      [3, 2, 1],
    );
    assert.deepEqual(await records.workingState(NAMESPACE), v3);
  });

  it('keeps every concurrent patch of one holder (each re-merges on the latest version)', async (t) => {
    const { records, leases } = setupResume(t);
    const { epoch } = await leases.acquire(NAMESPACE, 'pod-a');
    const scope = { namespace: NAMESPACE, epoch };
    await Promise.all([
      records.patchWorkingState(scope, { goal: 'g' }),
      records.patchWorkingState(scope, { focus: 'f' }),
      records.patchWorkingState(scope, { notes: 'n' }),
    ]);
    const s = await records.workingState(NAMESPACE);
    assert.deepEqual([s?.version, s?.goal, s?.focus, s?.notes], [3, 'g', 'f', 'n']);
  });
});

describe('ResumeRecords writes and the lease', () => {
  it('refuses a write without an epoch with lease_not_held and a stale one with lease_lost', async (t) => {
    const { records, leases, clock } = setupResume(t);
    await failsWith(
      records.patchWorkingState({ namespace: NAMESPACE, epoch: undefined }, { goal: 'x' }),
      'lease_not_held',
    );
    const a = await leases.acquire(NAMESPACE, 'pod-a', 1000);
    clock.advance(1000);
    const b = await leases.acquire(NAMESPACE, 'pod-b', 60_000);
    const err = await failsWith(
      records.recordTurn({ namespace: NAMESPACE, epoch: a.epoch }, { role: 'user', content: 'x' }),
      'lease_lost',
    );
    assert.match(err.message, /pod-b/);
    await records.recordTurn({ namespace: NAMESPACE, epoch: b.epoch }, { role: 'user', content: 'y' });
    assert.deepEqual(
      (await records.turns(NAMESPACE, 10)).map((x) => x.content),
      ['y'],
    );
  });
});

describe('ResumeRecords.addMilestone', () => {
  it('records milestones in order and sets last_milestone and progress', async (t) => {
    const { records, leases } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'p')).epoch };
    await records.patchWorkingState(scope, { goal: 'g' });
    await records.addMilestone(scope, { name: 'built' });
    const { milestone, state } = await records.addMilestone(scope, { name: 'tested', progress: '2 of 3' });
    assert.equal(milestone.seq, 2);
    assert.deepEqual([state.lastMilestone, state.progress, state.goal, state.version], ['tested', '2 of 3', 'g', 3]);
    assert.deepEqual(
      (await records.milestones(NAMESPACE, 10)).map((m) => m.name),
      ['built', 'tested'],
    );
  });
});

describe('ResumeRecords.recordTurn', () => {
  it('stores a repeated message id once and answers the first seq', async (t) => {
    const { records, leases, store } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'p')).epoch };
    const first = await records.recordTurn(scope, { role: 'user', content: 'hi', messageId: 'm-1' });
    const retry = await records.recordTurn(scope, { role: 'user', content: 'hi', messageId: 'm-1' });
    assert.deepEqual(first, { seq: 1, duplicate: false, outputRef: null });
    assert.deepEqual(retry, { seq: 1, duplicate: true, outputRef: null });
    assert.equal(await store.countTurns(NAMESPACE), 1);
  });

  it('moves content above the token limit to an output and keeps an opening and the ref', async (t) => {
    const { records, leases } = setupResume(t, { turnTokenLimit: 300 });
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'p')).epoch };
    const big = 'log line\n'.repeat(200);
    const r = await records.recordTurn(scope, { role: 'tool', name: 'shell', content: big, messageId: 'big' });
    assert.match(r.outputRef ?? '', /^out_/);
    const [turn] = await records.turns(NAMESPACE, 1);
    assert.ok(turn && turn.content.length < big.length && turn.content.startsWith('log line'));
    assert.ok(turn?.content.includes(r.outputRef as string));
    assert.ok(estimateTokens(turn?.content ?? '') <= 300);
    assert.equal((await records.output(NAMESPACE, r.outputRef as string))?.content, big);
    const again = await records.recordTurn(scope, { role: 'tool', name: 'shell', content: big, messageId: 'big' });
    assert.deepEqual(again, { seq: 1, duplicate: true, outputRef: r.outputRef });
    assert.equal((await records.outputs(NAMESPACE, 10)).length, 1);
  });
});

describe('ResumeRecords outputs and pointers', () => {
  it('stores an output of exactly 1 MiB and refuses one byte more with 413 too_large', async (t) => {
    const { records, leases } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'p')).epoch };
    const ok = await records.storeOutput(scope, { content: 'x'.repeat(MAX_OUTPUT_BYTES), tool: 't' });
    assert.equal(ok.bytes, MAX_OUTPUT_BYTES);
    await failsWith(records.storeOutput(scope, { content: 'x'.repeat(MAX_OUTPUT_BYTES + 1) }), 'too_large');
    assert.equal((await records.outputs(NAMESPACE, 10)).length, 1);
  });

  it('sets, replaces and removes pointers', async (t) => {
    const { records, leases } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'p')).epoch };
    await records.setPointer(scope, 'repo', { type: 'git_ref', fields: { ref: 'main' } });
    await records.setPointer(scope, 'repo', { type: 'git_ref', fields: { ref: 'feature' }, note: 'wip' });
    assert.deepEqual(
      (await records.pointers(NAMESPACE, 100)).map((p) => [p.name, p.fields.ref, p.note]),
      [['repo', 'feature', 'wip']],
    );
    assert.equal(await records.removePointer(scope, 'repo'), true);
    assert.equal(await records.removePointer(scope, 'repo'), false);
  });
});
