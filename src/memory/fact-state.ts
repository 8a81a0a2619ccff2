/**
 * @module
 * How one write changes what is believed about one fact, from the fact's current beliefs alone when
 * the write is the newest event of the fact (the common case), else by folding its whole log.
 * Both give what `foldFact` gives over the full log. Pure; used by the writer.
 */
import type { CurrentBelief, StoredEvent } from '../store/store.ts';
import { foldFact } from './fold.ts';

/** What the writer knows of one fact during a batch. */
export interface FactState {
  namespace: string;
  subject: string;
  predicate: string;
  /** Current beliefs, oldest first. */
  beliefs: CurrentBelief[];
  /** Latest observed_at of any event of the fact (stored or written in this batch). */
  lastObservedAt: number | null;
  /** The whole log, once a back-dated write needed it; null until then. */
  log: StoredEvent[] | null;
  /** True once this batch changed the beliefs. */
  changed: boolean;
}

/** What an assertion did. */
export interface AssertOutcome {
  alreadyKnown: boolean;
  superseded: unknown[];
}

/** True when `e` must be placed with a full fold (it is not strictly the newest event of the fact). */
export function needsLog(state: FactState, e: StoredEvent): boolean {
  return state.log === null && state.lastObservedAt !== null && e.observedAt <= state.lastObservedAt;
}

/**
 * Applies an assertion to `state` (mutates it). A held value writes nothing (`alreadyKnown`).
 * @param e the new assertion, with its final id
 */
export function applyAssertion(state: FactState, e: StoredEvent, cardinality: 'single' | 'multi'): AssertOutcome {
  if (state.beliefs.some((b) => b.event.valueKey === e.valueKey)) return { alreadyKnown: true, superseded: [] };
  const before = state.beliefs;
  if (state.log) {
    state.log.push(e);
    state.beliefs = foldFact(state.log, cardinality);
  } else if (cardinality === 'single') {
    const prev = before[0];
    state.beliefs = [
      {
        event: e,
        replaced: prev ? [{ value: prev.event.value, observedAt: prev.event.observedAt }, ...prev.replaced] : [],
      },
    ];
  } else {
    state.beliefs = [...before, { event: e, replaced: [] }];
  }
  state.lastObservedAt = Math.max(state.lastObservedAt ?? e.observedAt, e.observedAt);
  state.changed = true;
  const becameCurrent = state.beliefs.some((b) => b.event === e);
  return {
    alreadyKnown: false,
    superseded: cardinality === 'single' && becameCurrent ? before.map((b) => b.event.value) : [],
  };
}

/**
 * Applies a retraction to `state` (mutates it). The retraction must be observed at or after
 * `state.lastObservedAt` (the writer places it there), so it removes exactly the values it names.
 */
export function applyRetraction(state: FactState, r: StoredEvent, cardinality: 'single' | 'multi'): void {
  if (state.log) {
    state.log.push(r);
    state.beliefs = foldFact(state.log, cardinality);
  } else {
    state.beliefs = r.valueKey === null ? [] : state.beliefs.filter((b) => b.event.valueKey !== r.valueKey);
  }
  state.lastObservedAt = Math.max(state.lastObservedAt ?? r.observedAt, r.observedAt);
  state.changed = true;
}
