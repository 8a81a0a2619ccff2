/**
 * @module
 * How one write changes what is believed about one fact, from the fact's current beliefs alone when
 * the write is the newest event of the fact (the common case), else by folding its whole log.
 * Both give what `foldFact` gives over the full log. Multi facts may hold thousands of values, so
 * their beliefs are known value by value (`known`) and changes are kept as an increment. Pure.
 */
import type { BeliefChange, CurrentBelief, StoredEvent } from '../store/store.ts';
import { foldFact, replacedBy } from './fold.ts';

/** What the writer knows of one fact during a batch. */
export interface FactState {
  namespace: string;
  subject: string;
  predicate: string;
  /** Current beliefs known so far, oldest first: all of them when `complete`, else those of `knownKeys`. */
  beliefs: CurrentBelief[];
  complete: boolean;
  /** Value keys whose beliefs are in `beliefs` (for a multi fact that is not `complete`). */
  knownKeys: Set<string>;
  /** Latest observed_at of any event of the fact (stored or written in this batch). */
  lastObservedAt: number | null;
  /** The whole log, once a back-dated write needed it; null until then. */
  log: StoredEvent[] | null;
  /** Increment since the batch began; `replaceAll` once the log was folded. */
  added: CurrentBelief[];
  removed: Set<string>;
  replaceAll: boolean;
}

/** What an assertion did. */
export interface AssertOutcome {
  alreadyKnown: boolean;
  superseded: unknown[];
}

/** A fresh state from what the store said. */
export function newFactState(
  key: { namespace: string; subject: string; predicate: string },
  lastObservedAt: number | null,
): FactState {
  return {
    ...key,
    beliefs: [],
    complete: false,
    knownKeys: new Set(),
    lastObservedAt,
    log: null,
    added: [],
    removed: new Set(),
    replaceAll: false,
  };
}

/** True when `e` must be placed with a full fold (it is not strictly the newest event of the fact). */
export function needsLog(state: FactState, e: StoredEvent): boolean {
  return state.log === null && state.lastObservedAt !== null && e.observedAt <= state.lastObservedAt;
}

/** Replaces the beliefs with a full fold of the log. */
function refold(state: FactState, cardinality: 'single' | 'multi'): void {
  state.beliefs = foldFact(state.log as StoredEvent[], cardinality);
  state.complete = true;
  state.replaceAll = true;
}

function drop(state: FactState, b: CurrentBelief): void {
  state.beliefs = state.beliefs.filter((x) => x !== b);
  const i = state.added.indexOf(b);
  if (i >= 0) state.added.splice(i, 1);
  else state.removed.add(b.event.id);
}

/**
 * Applies an assertion to `state` (mutates it). A held value writes nothing (`alreadyKnown`).
 * Needs `complete` for single facts and `e.valueKey` known for multi facts.
 * @param stored true for an event being imported (it is stored whatever it changes)
 */
export function applyAssertion(
  state: FactState,
  e: StoredEvent,
  cardinality: 'single' | 'multi',
  stored = false,
): AssertOutcome {
  const held = state.beliefs.some((b) => b.event.valueKey === e.valueKey);
  // A remember of a held value writes nothing. An imported (`stored`) event is history: on the fast
  // path a held value changes nothing either, but placed inside the log it can (it may come first).
  if (held && !(stored && state.log)) return { alreadyKnown: true, superseded: [] };
  const before = cardinality === 'single' ? state.beliefs : [];
  if (state.log) {
    state.log.push(e);
    refold(state, cardinality);
  } else if (cardinality === 'single') {
    const prev = before[0];
    const belief: CurrentBelief = {
      event: e,
      replaced: prev ? replacedBy(prev) : [],
    };
    if (prev) drop(state, prev);
    state.beliefs = [belief];
    state.added.push(belief);
  } else {
    const belief: CurrentBelief = { event: e, replaced: [] };
    state.beliefs = [...state.beliefs, belief];
    state.added.push(belief);
  }
  state.lastObservedAt = Math.max(state.lastObservedAt ?? e.observedAt, e.observedAt);
  const becameCurrent = state.beliefs.some((b) => b.event === e);
  return {
    alreadyKnown: held,
    superseded: cardinality === 'single' && becameCurrent ? before.map((b) => b.event.value) : [],
  };
}

/**
 * Applies a retraction to `state` (mutates it). The retraction must be observed at or after
 * `state.lastObservedAt` (the writer places it there), so it removes exactly the values it names.
 * Needs `complete` for a blanket retraction and `r.valueKey` known for a targeted one.
 */
export function applyRetraction(state: FactState, r: StoredEvent, cardinality: 'single' | 'multi'): void {
  if (state.log) {
    state.log.push(r);
    refold(state, cardinality);
  } else {
    for (const b of state.beliefs) if (r.valueKey === null || b.event.valueKey === r.valueKey) drop(state, b);
  }
  state.lastObservedAt = Math.max(state.lastObservedAt ?? r.observedAt, r.observedAt);
}

/** The store change for what this batch did to the fact, or null when it did nothing. */
export function changeOf(state: FactState): BeliefChange | null {
  const key = { namespace: state.namespace, subject: state.subject, predicate: state.predicate };
  const row = (b: CurrentBelief) => ({ eventId: b.event.id, replaced: b.replaced });
  if (state.replaceAll) return { ...key, current: state.beliefs.map(row) };
  if (state.added.length === 0 && state.removed.size === 0) return null;
  return { ...key, remove: [...state.removed], add: state.added.map(row) };
}
