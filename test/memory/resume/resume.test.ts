/**
 * The resume call and its briefing: the lease it takes (lease_held for another holder, none with
 * defer), a fresh namespace, memories matching the focus, and a budget that holds with 10,000 turns
 * while the answer reports what it omitted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderBriefing } from '../../../src/memory/resume/briefing.ts';
import { estimateTokens } from '../../../src/memory/resume/tokens.ts';
import type { TurnRecord } from '../../../src/store/resume-types.ts';
import { NAMESPACE, refused, T0 } from '../helpers.ts';
import { failsWith, setupResume } from './helpers.ts';

describe('Resumer.resume', () => {
  it('takes the lease, answers fresh for a new agent, and refuses a second holder with lease_held', async (t) => {
    const { resumer } = setupResume(t);
    const first = await resumer.resume({ namespace: NAMESPACE, holder: 'pod-a' });
    assert.equal(first.fresh, true);
    assert.equal(first.taken?.holder, 'pod-a');
    assert.match(first.briefing.text, /starts fresh/);
    const err = await failsWith(resumer.resume({ namespace: NAMESPACE, holder: 'pod-b' }), 'lease_held');
    assert.match(err.message, /'pod-a'.*until 2026-01-01T00:01:00.000Z/);
    const deferred = await resumer.resume({ namespace: NAMESPACE, holder: 'pod-b', defer: true });
    assert.equal(deferred.taken, null);
    assert.equal(deferred.lease?.holder, 'pod-a');
  });

  it('briefs the working state, pointers, turns, outputs and the memories matching the focus', async (t) => {
    const { resumer, records, leases, remember } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'pod-a')).epoch };
    await remember({ subject: 'parser', predicate: 'note', value: 'the tokenizer drops unicode quotes' });
    await remember({ subject: 'weather', predicate: 'note', value: 'sunny on monday' });
    await records.patchWorkingState(scope, {
      goal: 'fix the parser',
      focus: 'tokenizer quotes',
      plan: ['repro', 'fix'],
    });
    await records.setPointer(scope, 'branch', { type: 'git_ref', fields: { ref: 'fix-quotes' } });
    await records.recordTurn(scope, { role: 'user', content: 'please fix the quotes bug' });
    await records.storeOutput(scope, { content: 'stack trace', tool: 'pytest', summary: '3 failures' });
    await leases.release(NAMESPACE, scope.epoch);

    const r = await resumer.resume({ namespace: NAMESPACE, holder: 'pod-b' });
    assert.equal(r.fresh, false);
    assert.ok((r.taken?.epoch ?? 0) > scope.epoch);
    for (const text of [
      'fix the parser',
      'tokenizer quotes',
      'fix-quotes',
      'please fix the quotes bug',
      '3 failures',
    ]) {
      assert.ok(r.briefing.text.includes(text), text);
    }
    assert.deepEqual(
      r.briefing.memories.map((b) => b.event.value),
      ['the tokenizer drops unicode quotes'],
    );
    assert.deepEqual(r.briefing.omitted, { turns: 0, memories: 0, outputs: 0 });
    assert.equal(r.briefing.tokens, estimateTokens(r.briefing.text));
  });

  it('refuses a budget below the minimum and a TTL out of range, naming the field', async (t) => {
    const { resumer } = setupResume(t);
    await refused(resumer.resume({ namespace: NAMESPACE, holder: 'p', tokenBudget: 499 }), 'token_budget', /500/);
    await refused(resumer.resume({ namespace: NAMESPACE, holder: 'p', leaseTtlMs: 999 }), 'ttl_ms', /1000 to 3600000/);
  });

  it('keeps the briefing within the budget with 10,000 turns and reports what it omitted', async (t) => {
    const { resumer, records, leases, store } = setupResume(t);
    const scope = { namespace: NAMESPACE, epoch: (await leases.acquire(NAMESPACE, 'pod-a', 3_600_000)).epoch };
    await records.patchWorkingState(scope, { goal: 'long task', focus: 'turn' });
    const writes = Array.from({ length: 10_000 }, (_, i) => ({
      kind: 'turn' as const,
      turn: {
        namespace: NAMESPACE,
        role: 'assistant' as const,
        content: `turn number ${i + 1}: ${'words '.repeat(20)}`,
        name: null,
        messageId: null,
        brief: null,
        outputRef: null,
        at: T0,
        epoch: scope.epoch,
      },
    }));
    const got = await store.writeResume({ namespace: NAMESPACE, epoch: scope.epoch, now: T0 }, writes);
    assert.equal(got.ok, true);
    await leases.release(NAMESPACE, scope.epoch);
    for (const budget of [500, 2000, 8000]) {
      const r = await resumer.resume({ namespace: NAMESPACE, holder: 'pod-b', tokenBudget: budget, defer: true });
      assert.ok(r.briefing.tokens <= budget, `${r.briefing.tokens} <= ${budget}`);
      const shown = r.briefing.turns.length;
      assert.ok(shown > 0);
      assert.equal(r.briefing.omitted.turns, 10_000 - shown);
      assert.deepEqual(
        r.briefing.turns.map((x) => x.seq),
        Array.from({ length: shown }, (_, i) => 10_000 - shown + 1 + i),
        'the newest turns, oldest first',
      );
      assert.ok(r.briefing.text.includes('turn number 10000'));
    }
  });
});

describe('renderBriefing', () => {
  it('cuts an oversized working state to its share and still fits the budget', () => {
    const turn: TurnRecord = {
      namespace: NAMESPACE,
      seq: 1,
      role: 'user',
      content: 'hello',
      name: null,
      messageId: null,
      brief: null,
      outputRef: null,
      at: T0,
      epoch: 1,
    };
    const b = renderBriefing({
      namespace: NAMESPACE,
      epoch: 1,
      state: {
        namespace: NAMESPACE,
        version: 1,
        goal: 'g',
        plan: [],
        progress: null,
        focus: null,
        decisions: [],
        openQuestions: [],
        notes: 'n'.repeat(40_000),
        step: null,
        lastMilestone: null,
        updatedAt: T0,
        epoch: 1,
      },
      pointers: [],
      turns: [turn],
      totalTurns: 1,
      memories: [],
      outputs: [],
      totalOutputs: 0,
      budget: 1000,
    });
    assert.ok(b.tokens <= 1000);
    assert.ok(b.text.startsWith('# Resume briefing'));
    assert.deepEqual(b.turns, [turn]);
  });
});
