/**
 * @module
 * Folding: turns the event log of one (subject, predicate) into what is believed, as of a time.
 * single: the newest assertion holds; multi: values accumulate; retractions remove and never bring an
 * older value back. Order: observed_at, then assertion before retraction, then id. Pure.
 */
import type { CurrentBelief, StoredEvent } from '../store/fact-store.ts';

/** A value believed now (or as of a time): the store's `CurrentBelief` shape. */
export type Belief = CurrentBelief;

/**
 * Most values a single fact's belief lists as `replaced` (newest first). The list is stored with the
 * belief and rewritten by every change of the fact, so unbounded it made a fact changed n times cost
 * O(n) bytes per write; the whole record stays in the fact's history.
 */
export const MAX_REPLACED = 10;

/** What a new value of a single fact replaces when `prev` held it: `prev` first, then what `prev` replaced. */
export function replacedBy(prev: Belief): Belief['replaced'] {
  return [{ value: prev.event.value, observedAt: prev.event.observedAt }, ...prev.replaced].slice(0, MAX_REPLACED);
}

/** Fold order: observed_at, assertion before retraction, then id. */
export function compareEvents(a: StoredEvent, b: StoredEvent): number {
  if (a.observedAt !== b.observedAt) return a.observedAt - b.observedAt;
  if (a.retraction !== b.retraction) return a.retraction ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Folds the events of one (subject, predicate).
 * @param events any order; events after `asOf` are ignored
 * @param cardinality the rule in force at `asOf`
 * @param asOf epoch ms; `undefined` means now (every event)
 * @returns current beliefs, oldest first
 */
export function foldFact(events: readonly StoredEvent[], cardinality: 'single' | 'multi', asOf?: number): Belief[] {
  const ordered = events.filter((e) => asOf === undefined || e.observedAt <= asOf).sort(compareEvents);
  const fold = new FactFold(cardinality);
  for (const e of ordered) fold.add(e);
  return fold.beliefs();
}

/** A single fact's belief after `e`, given the one held before it (`e` next in fold order). */
export function foldSingle(current: Belief | null, e: StoredEvent): Belief | null {
  if (e.retraction) {
    return current && (e.valueKey === null || e.valueKey === current.event.valueKey) ? null : current;
  }
  if (current && current.event.valueKey === e.valueKey) return current; // restatement keeps the first
  return { event: e, replaced: current ? replacedBy(current) : [] };
}

/**
 * The fold of one fact fed event by event, in fold order: a log read page by page (`recall.ts`)
 * folds as it reads, holding only the beliefs, never the whole log.
 */
export class FactFold {
  readonly #single: boolean;
  /** single: the held belief, if any. */
  #current: Belief | null = null;
  /** multi: the held values by value key, oldest first. */
  readonly #held = new Map<string, Belief>();

  constructor(cardinality: 'single' | 'multi') {
    this.#single = cardinality === 'single';
  }

  /** Takes the next event; events must come in fold order (`compareEvents`). */
  add(e: StoredEvent): void {
    if (this.#single) {
      this.#current = foldSingle(this.#current, e);
      return;
    }
    if (e.retraction) {
      if (e.valueKey === null) this.#held.clear();
      else this.#held.delete(e.valueKey);
      return;
    }
    const key = e.valueKey as string;
    if (!this.#held.has(key)) this.#held.set(key, { event: e, replaced: [] });
  }

  /** What is believed after the events added so far, oldest first. */
  beliefs(): Belief[] {
    if (this.#single) return this.#current ? [this.#current] : [];
    return [...this.#held.values()];
  }
}

/** Splits a mixed list of events into groups keyed `subject\u0000predicate`, keeping order. */
export function groupByFact(events: readonly StoredEvent[]): Map<string, StoredEvent[]> {
  const groups = new Map<string, StoredEvent[]>();
  for (const e of events) {
    const k = `${e.subject}\u0000${e.predicate}`;
    let g = groups.get(k);
    if (!g) {
      g = [];
      groups.set(k, g);
    }
    g.push(e);
  }
  return groups;
}
