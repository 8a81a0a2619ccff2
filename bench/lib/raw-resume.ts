/**
 * @module
 * bench:resume's baseline: the rows a resume reads and the turn a write stores, straight on the SQLite
 * store in this process (no HTTP, no auth, no validation, no briefing): take the lease; read the working
 * state, pointers, the 400 newest turns and their count, the 100 newest outputs and their count; search
 * the beliefs for each focus word as the resume does (20 a word). A turn write is one fenced
 * `writeResume` of one turn.
 */
import { searchTerms } from '../../src/memory/recall.ts';
import { focusWords } from '../../src/memory/resume/resume.ts';
import type { Fence } from '../../src/store/resume-types.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

/** What resume reads at most (as src/memory/resume/resume.ts does). */
const TURN_WINDOW = 400;
const OUTPUT_WINDOW = 100;
const PER_WORD = 20;

/**
 * One resume's reads, lease first. Returns the epoch taken, for the caller to release (untimed).
 * @throws when the lease is held (the caller releases every one it takes)
 */
export async function rawResume(store: SqliteStore, namespace: string, holder: string): Promise<number> {
  const got = await store.acquireLease({ namespace, holder, ttlMs: 60_000, now: Date.now() });
  if (!got.acquired) throw new Error(`raw resume: the lease of ${namespace} is held by ${got.held.holder}`);
  const [state] = await Promise.all([
    store.workingState(namespace),
    store.pointers(namespace, 1000),
    store.turns({ namespace, limit: TURN_WINDOW }),
    store.countTurns(namespace),
    store.outputs(namespace, OUTPUT_WINDOW),
    store.countOutputs(namespace),
  ]);
  if (state) {
    for (const word of focusWords([state.focus, ...state.openQuestions, state.goal])) {
      await store.searchBeliefs({ namespace, terms: searchTerms(word), limit: PER_WORD });
    }
  }
  return got.lease.epoch;
}

/** Ends a lease `rawResume` took. */
export async function rawRelease(store: SqliteStore, namespace: string, epoch: number): Promise<void> {
  await store.releaseLease({ namespace, epoch, now: Date.now() });
}

/** One fenced turn write; throws when the store refuses it. */
export async function rawTurn(store: SqliteStore, fence: Omit<Fence, 'now'>, content: string): Promise<void> {
  const now = Date.now();
  const turn = {
    namespace: fence.namespace,
    role: 'assistant' as const,
    content,
    name: null,
    messageId: null,
    brief: null,
    outputRef: null,
    at: now,
    epoch: fence.epoch,
  };
  const r = await store.writeResume({ ...fence, now }, [{ kind: 'turn', turn }]);
  if (!r.ok) throw new Error(`raw turn write refused: ${r.reason}`);
}
