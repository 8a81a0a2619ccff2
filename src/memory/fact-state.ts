/**
 * @module
 * How one write changes what is believed about one fact, from what the writer keeps of the fact in a
 * batch: its current beliefs by value, its latest event time and, per value, its latest retraction.
 * That places every new value of a multi fact, back-dated or not, in O(1): a value is believed iff it
 * comes after the last retraction withdrawing it. A single fact's back-dated value, or an imported
 * event inside a fact's history, needs the fact's log: it is read and folded once per batch, kept in
 * fold order with the belief held after each event, and an event landing in it is folded from its
 * place on only until the fold holds what it held there before (a single fact's belief lists at most
 * 10 replaced values, so that is a few events on, not the rest of the log); a multi fact's log (an
 * import's) is folded again. Every path gives what `foldFact` gives over the full log. Pure.
 */
import type { BeliefChange, CurrentBelief, FactHead, StoredEvent } from '../store/fact-store.ts';
import { compareEvents, foldFact, foldSingle, replacedBy } from './fold.ts';

/** What the writer knows of one fact during a batch. */
export interface FactState {
  namespace: string;
  subject: string;
  predicate: string;
  /** Current beliefs known so far by value key: all of them when `complete`, else those of `knownKeys`. */
  beliefs: Map<string, CurrentBelief>;
  complete: boolean;
  /** Value keys whose beliefs are in `beliefs` (for a multi fact that is not `complete`). */
  knownKeys: Set<string>;
  /** Latest observed_at of any event of the fact (stored or written in this batch). */
  lastObservedAt: number | null;
  /**
   * Per value key, the latest observed_at of a retraction withdrawing it (null: none), exact: from the
   * store's head of that value, or a retraction of it written in this batch (placed after everything).
   */
  retractedAt: Map<string, number | null>;
  /**
   * A retraction of all values written in this batch (placed after every stored event, so it is the
   * latest retraction of every value), or null.
   */
  retractedAllAt: number | null;
  /** The whole log in fold order, once a write needed it; null until then. */
  log: StoredEvent[] | null;
  /** A single fact's belief after each event of `log` (same indexes); null for a multi fact. */
  heldAfter: (CurrentBelief | null)[] | null;
  /** Times the log was folded in this batch (the writer's `folds` counter). */
  folds: number;
  /** Increment since the batch began, by event id; `replaceAll` once the log was folded. */
  added: Map<string, CurrentBelief>;
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
    beliefs: new Map(),
    complete: false,
    knownKeys: new Set(),
    lastObservedAt,
    retractedAt: new Map(),
    retractedAllAt: null,
    log: null,
    heldAfter: null,
    folds: 0,
    added: new Map(),
    removed: new Set(),
    replaceAll: false,
  };
}

/** True when `e` sorts after every event of the fact (then the beliefs alone say what it changes). */
function isNewest(state: FactState, e: StoredEvent): boolean {
  if (state.log) {
    const last = state.log[state.log.length - 1];
    return last === undefined || compareEvents(last, e) < 0;
  }
  return state.lastObservedAt === null || e.observedAt > state.lastObservedAt;
}

/**
 * Whether an assertion of a multi fact comes after the last retraction withdrawing its value; undefined
 * when what the writer holds cannot tell (then the writer reads that value's head, `needsRetractions`).
 */
function afterRetractions(state: FactState, e: StoredEvent): boolean | undefined {
  const key = e.valueKey as string;
  let at: number | null | undefined = state.retractedAt.get(key);
  if (at === undefined) {
    // Unknown, unless this batch withdrew all values (after every stored retraction).
    if (state.retractedAllAt === null) return undefined;
    at = null;
  }
  const latest = Math.max(at ?? -Infinity, state.retractedAllAt ?? -Infinity);
  // An assertion sorts before a retraction of the same ms.
  return e.observedAt > latest;
}

/**
 * True when a multi fact's assertion `e` cannot be placed before the writer reads the head of its
 * value (its beliefs and latest retraction): it is not the fact's newest event, and what is held
 * does not say where its value's last retraction is.
 */
export function needsRetractions(state: FactState, e: StoredEvent, cardinality: 'single' | 'multi'): boolean {
  return cardinality === 'multi' && !e.retraction && !state.log && !isNewest(state, e) && !afterRetractions(state, e);
}

/** Records what the head of one value said about its retractions (the batch's own are later). */
export function noteRetractions(state: FactState, valueKey: string, head: FactHead): void {
  if (!state.retractedAt.has(valueKey)) state.retractedAt.set(valueKey, head.lastRetractionAt);
}

/**
 * True when `e` must be placed in the fact's log (read it with `loadLog` first): it is not the newest
 * event of the fact, and it is not an assertion of a multi fact whose value's retractions are known.
 */
export function needsLog(state: FactState, e: StoredEvent, cardinality: 'single' | 'multi'): boolean {
  if (state.log || isNewest(state, e)) return false;
  return !(cardinality === 'multi' && !e.retraction && afterRetractions(state, e) !== undefined);
}

/** Takes the fact's whole log (stored plus written in this batch) and folds it: once per batch. */
export function loadLog(state: FactState, log: StoredEvent[], cardinality: 'single' | 'multi'): void {
  state.log = [...log].sort(compareEvents);
  refold(state, cardinality);
}

/** Replaces the beliefs with a full fold of the log (a single fact's: keeping each event's belief). */
function refold(state: FactState, cardinality: 'single' | 'multi'): void {
  const log = state.log as StoredEvent[];
  if (cardinality === 'single') {
    const held: (CurrentBelief | null)[] = [];
    let current: CurrentBelief | null = null;
    for (const e of log) {
      current = foldSingle(current, e);
      held.push(current);
    }
    state.heldAfter = held;
    setSingleBelief(state, current);
  } else {
    state.heldAfter = null;
    state.beliefs = new Map(foldFact(log, cardinality).map((b) => [b.event.valueKey as string, b]));
  }
  state.folds++;
  state.complete = true;
  state.replaceAll = true;
}

function setSingleBelief(state: FactState, b: CurrentBelief | null): void {
  state.beliefs = new Map(b ? [[b.event.valueKey as string, b]] : []);
}

/** Same event and same replaced values: the fold goes on alike from two such beliefs. */
function sameBelief(a: CurrentBelief | null | undefined, b: CurrentBelief | null | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.event.id !== b.event.id || a.replaced.length !== b.replaced.length) return false;
  return a.replaced.every((r, i) => r.value === b.replaced[i]?.value && r.observedAt === b.replaced[i]?.observedAt);
}

/**
 * Places `e` in a single fact's log and folds from there, until the belief after an event is the one
 * held there before (then every later one is too): the events before `e` are never folded again.
 */
function placeSingle(state: FactState, e: StoredEvent): void {
  const log = state.log as StoredEvent[];
  const held = state.heldAfter as (CurrentBelief | null)[];
  const at = placeInLog(log, e);
  held.splice(at, 0, null);
  let current = at === 0 ? null : (held[at - 1] ?? null);
  for (let i = at; i < log.length; i++) {
    const next = foldSingle(current, log[i] as StoredEvent);
    if (i > at && sameBelief(next, held[i])) break;
    held[i] = next;
    current = next;
  }
  setSingleBelief(state, held[held.length - 1] ?? null);
  state.replaceAll = true;
}

/** Puts `e` into the log at its place; returns that index. */
function placeInLog(log: StoredEvent[], e: StoredEvent): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareEvents(log[mid] as StoredEvent, e) <= 0) lo = mid + 1;
    else hi = mid;
  }
  log.splice(lo, 0, e);
  return lo;
}

function drop(state: FactState, b: CurrentBelief): void {
  state.beliefs.delete(b.event.valueKey as string);
  if (!state.added.delete(b.event.id)) state.removed.add(b.event.id);
}

function add(state: FactState, b: CurrentBelief): void {
  state.beliefs.set(b.event.valueKey as string, b);
  state.added.set(b.event.id, b);
}

/**
 * Applies an assertion to `state` (mutates it). A held value writes nothing (`alreadyKnown`).
 * Needs `complete` for single facts and `e.valueKey` known for multi facts, and `needsLog` false or the
 * log loaded.
 * @param stored true for an event being imported (it is stored whatever it changes)
 */
export function applyAssertion(
  state: FactState,
  e: StoredEvent,
  cardinality: 'single' | 'multi',
  stored = false,
): AssertOutcome {
  const key = e.valueKey as string;
  const heldBy = state.beliefs.get(key);
  const held = heldBy !== undefined;
  // A remember of a held value writes nothing. An imported (`stored`) event is history: after the
  // fact's newest event a held value changes nothing either, but placed inside the log it can.
  if (held && !stored) return { alreadyKnown: true, superseded: [] };
  const before = cardinality === 'single' ? [...state.beliefs.values()] : [];
  const newest =
    !state.heldAfter && (state.log ? placeInLog(state.log, e) === state.log.length - 1 : isNewest(state, e));
  if (state.heldAfter) {
    placeSingle(state, e); // a single fact whose log is loaded: folded from e's place
  } else if (!newest && state.log) {
    refold(state, cardinality);
  } else if (!newest) {
    // A multi fact's value inside its history (the log is not needed: `needsLog`): believed from
    // here when it comes after its value's last retraction and before the assertion holding it.
    if (afterRetractions(state, e) && (!heldBy || compareEvents(e, heldBy.event) < 0)) {
      if (heldBy) drop(state, heldBy);
      add(state, { event: e, replaced: [] });
    }
  } else if (held) {
    // The newest event restating a held value: the earlier assertion keeps holding it.
  } else if (cardinality === 'single') {
    const prev = before[0];
    if (prev) drop(state, prev);
    add(state, { event: e, replaced: prev ? replacedBy(prev) : [] });
  } else {
    add(state, { event: e, replaced: [] });
  }
  state.lastObservedAt = Math.max(state.lastObservedAt ?? e.observedAt, e.observedAt);
  const becameCurrent = state.beliefs.get(key)?.event === e;
  return {
    alreadyKnown: held,
    superseded: cardinality === 'single' && becameCurrent ? before.map((b) => b.event.value) : [],
  };
}

/**
 * Applies a retraction to `state` (mutates it). Unless the log is loaded (`needsLog`), the retraction
 * must be the newest event of the fact (the writer places it there), so it removes exactly the values
 * it names. Needs `complete` for a blanket retraction and `r.valueKey` known for a targeted one.
 */
export function applyRetraction(state: FactState, r: StoredEvent, cardinality: 'single' | 'multi'): void {
  if (state.heldAfter) {
    placeSingle(state, r);
  } else if (state.log) {
    if (placeInLog(state.log, r) === state.log.length - 1) dropRetracted(state, r);
    else refold(state, cardinality);
  } else {
    dropRetracted(state, r);
  }
  // Newest (or in the log, which then answers instead): it is the value's last retraction.
  if (r.valueKey === null) state.retractedAllAt = r.observedAt;
  else state.retractedAt.set(r.valueKey, r.observedAt);
  state.lastObservedAt = Math.max(state.lastObservedAt ?? r.observedAt, r.observedAt);
}

function dropRetracted(state: FactState, r: StoredEvent): void {
  if (r.valueKey === null) for (const b of [...state.beliefs.values()]) drop(state, b);
  else {
    const b = state.beliefs.get(r.valueKey);
    if (b) drop(state, b);
  }
}

/** The store change for what this batch did to the fact, or null when it did nothing. */
export function changeOf(state: FactState): BeliefChange | null {
  const key = { namespace: state.namespace, subject: state.subject, predicate: state.predicate };
  const row = (b: CurrentBelief) => ({ eventId: b.event.id, replaced: b.replaced });
  if (state.replaceAll) return { ...key, current: [...state.beliefs.values()].map(row) };
  if (state.added.size === 0 && state.removed.size === 0) return null;
  return { ...key, remove: [...state.removed], add: [...state.added.values()].map(row) };
}
