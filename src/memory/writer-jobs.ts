/**
 * @module
 * What the memory writer (`writer.ts`) takes: validated assertions and retractions, the registry
 * version they were validated with, the queued jobs, and the group-commit counters. Types only.
 */
import type { Actor, StoredEvent } from '../store/fact-store.ts';
import type { PredicateDef } from '../store/registry-store.ts';
import type { AssertOutcome } from './fact-state.ts';

/** A validated assertion waiting for its id. */
export interface PendingAssertion {
  def: PredicateDef;
  event: Omit<StoredEvent, 'id'>;
}

/** A validated retraction: one value (`valueKey`) or all (`null`). */
export interface PendingRetraction {
  def: PredicateDef;
  subject: string;
  value: unknown;
  valueKey: string | null;
}

/**
 * The registry version a job was validated with (its tenant's newest as this replica knew it). The
 * store refuses the batch when another replica stored a newer one meanwhile (`StaleRegistryError`):
 * such a job fails with that error, to be validated again; the batch's other jobs are written again.
 */
export interface PlannedRegistry {
  tenant: string;
  versionId: string;
}

export type Job =
  | {
      kind: 'assert';
      items: PendingAssertion[];
      registry?: PlannedRegistry;
      done: (r: (AssertOutcome & { event: StoredEvent | null })[]) => void;
      fail: (e: unknown) => void;
    }
  | {
      kind: 'retract';
      namespace: string;
      actor: Actor;
      item: PendingRetraction;
      registry?: PlannedRegistry;
      done: (r: { withdrawn: number; event: StoredEvent | null }) => void;
      fail: (e: unknown) => void;
    }
  | { kind: 'exclusive'; run: () => Promise<void>; done: () => void; fail: (e: unknown) => void };

/** Counters of the group commit, for /metrics: `jobs / batches` is the mean batch size. */
export interface WriterStats {
  /** Store transactions written for remembers and forgets. */
  batches: number;
  /** Remember and forget calls they carried (one written in parts counts once per part). */
  jobs: number;
  /**
   * Full folds of a fact's log while planning writes and imports: at most one per fact per batch (a
   * single fact's back-dated value, an event imported inside a fact's history; more back-dated values
   * of that fact in the batch are folded from their place on, not from the log's start); new values
   * of a multi fact, back-dated or not, never fold.
   */
  folds: number;
}
