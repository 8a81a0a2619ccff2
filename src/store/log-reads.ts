/**
 * @module
 * Queries of the bounded log reads every `Store` serves (issue 21): one or more facts' logs page by
 * page in fold order, a count of those events that stops past a cap (so a read is refused before it
 * reads), and the facts of a namespace found by index seeks, never by walking their events. Types
 * only; the drivers answer them (`FactStore.factLog`, `countFactEvents`, `factGroups`).
 */
import type { FactKey } from './fact-store.ts';

/** Where a page of `factLog` ended: the fact and the fold-order place of its last event. */
export interface LogPosition {
  subject: string;
  predicate: string;
  /** Epoch ms. */
  observedAt: number;
  retraction: boolean;
  id: string;
}

/** Which events `factLog` reads: the facts one after another, each in fold order. */
export interface FactLogQuery {
  namespace: string;
  /** The facts, read in this order (each at most once). */
  groups: FactKey[];
  /** Only events observed at or before this (epoch ms); every event when absent. */
  asOf?: number;
  /** Only what comes after this place (its fact must be one of `groups`; earlier facts are skipped). */
  after?: LogPosition;
  /** At most this many events. */
  limit: number;
}

/** What `countFactEvents` counts: the events of `groups` (observed at or before `asOf`). */
export interface LogCountQuery {
  namespace: string;
  groups: FactKey[];
  /** Epoch ms; every event when absent. */
  asOf?: number;
  /** Counting stops once the count passes this: the answer is then `max + 1`. */
  max: number;
}

/** Which facts `factGroups` lists, in subject, predicate order. */
export interface FactGroupQuery {
  namespace: string;
  subject?: string;
  predicate?: string;
  /** At most this many facts. */
  limit: number;
  /** At most this many distinct facts of the namespace are looked at (one index seek each). */
  maxSteps: number;
}

/** Fold order (observed_at, assertion before retraction, then id), the order `factLog` answers in. */
export function comparePositions(a: Omit<LogPosition, 'subject' | 'predicate'>, b: typeof a): number {
  if (a.observedAt !== b.observedAt) return a.observedAt - b.observedAt;
  if (a.retraction !== b.retraction) return a.retraction ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
