/**
 * Builders for the lease and resume-record conformance groups: a held lease, complete records of
 * each kind, and the fence of a lease.
 */
import assert from 'node:assert/strict';
import type {
  Fence,
  LeaseRecord,
  MilestoneRecord,
  OutputRecord,
  PointerRecord,
  TurnRecord,
  WorkingStateRecord,
} from '../../../src/store/resume-types.ts';
import type { Store } from '../../../src/store/store.ts';

/** The conformance suite's "now": 2026-01-01, epoch ms. */
export const T0 = Date.UTC(2026, 0, 1);

/** Acquires the namespace's lease (it must be free) and returns it. */
export async function held(
  store: Store,
  namespace: string,
  holder = 'pod-a',
  ttlMs = 60_000,
  now = T0,
): Promise<LeaseRecord> {
  const got = await store.acquireLease({ namespace, holder, ttlMs, now });
  assert.equal(got.acquired, true, 'the lease was free');
  return (got as { lease: LeaseRecord }).lease;
}

/** The fence of `lease` at `now`. */
export function fenceOf(lease: LeaseRecord, now = lease.acquiredAt): Fence {
  return { namespace: lease.namespace, epoch: lease.epoch, now };
}

/** A complete working state version; `over` replaces any field. */
export function makeState(
  namespace: string,
  version: number,
  over: Partial<WorkingStateRecord> = {},
): WorkingStateRecord {
  return {
    namespace,
    version,
    goal: 'ship the release',
    plan: ['build', 'test', 'publish'],
    progress: `version ${version}`,
    focus: 'tests',
    decisions: ['use node:test'],
    openQuestions: ['which registry?'],
    notes: null,
    step: version,
    lastMilestone: null,
    updatedAt: T0 + version,
    epoch: 1,
    ...over,
  };
}

/** A turn without its seq; `over` replaces any field. */
export function makeTurn(namespace: string, over: Partial<TurnRecord> = {}): Omit<TurnRecord, 'seq'> {
  return {
    namespace,
    role: 'user',
    content: 'hello',
    name: null,
    messageId: null,
    brief: null,
    outputRef: null,
    at: T0,
    epoch: 1,
    ...over,
  };
}

/** A complete output; `over` replaces any field. */
export function makeOutput(namespace: string, ref: string, over: Partial<OutputRecord> = {}): OutputRecord {
  const content = over.content ?? `output ${ref}`;
  return {
    namespace,
    ref,
    content,
    tool: 'shell',
    summary: 'ran a command',
    bytes: Buffer.byteLength(content),
    at: T0,
    epoch: 1,
    ...over,
  };
}

/** A milestone without its seq. */
export function makeMilestone(namespace: string, name: string, epoch = 1): Omit<MilestoneRecord, 'seq'> {
  return { namespace, name, progress: null, at: T0, epoch };
}

/** A complete pointer; `over` replaces any field. */
export function makePointer(namespace: string, name: string, over: Partial<PointerRecord> = {}): PointerRecord {
  return {
    namespace,
    name,
    type: 'git_ref',
    fields: { repo: 'https://example.com/r.git', ref: 'refs/heads/main' },
    note: null,
    updatedAt: T0,
    epoch: 1,
    ...over,
  };
}
