/**
 * @module
 * Plans what one memory writer batch (`writer.ts`) writes: from the batch's parts and the fact heads
 * read in its transaction, the events to append and the beliefs they change (a `FactWrite`), loading
 * and folding a fact's log where an event lands inside its history. Imports plan with `FactPlanner`
 * too. No queueing, scheduling or settling here: those stay in `writer.ts`.
 */
import type { Clock } from '../common/clock.ts';
import { newEventId } from '../common/ids.ts';
import type {
  BeliefChange,
  FactHead,
  FactHeadRequest,
  FactReader,
  FactWrite,
  StoredEvent,
} from '../store/fact-store.ts';
import {
  type AssertOutcome,
  applyAssertion,
  applyRetraction,
  changeOf,
  type FactState,
  loadLog,
  needsLog,
  needsRetractions,
  newFactState,
  noteRetractions,
} from './fact-state.ts';
import type { Job, PendingAssertion, WriterStats } from './writer-jobs.ts';

/** What names a fact. */
export type FactKeyParts = { namespace: string; subject: string; predicate: string };

/** Identifies a fact in the writer's maps. */
export const factKey = (f: FactKeyParts): string => `${f.namespace}\u0000${f.subject}\u0000${f.predicate}`;

/** Identifies a prefetched head: of all the fact's beliefs (`valueKey` null) or of one value's. */
const headKey = (fact: string, valueKey: string | null): string =>
  valueKey === null ? `${fact}\u0000*` : `${fact}\u0001${valueKey}`;

export type AssertJob = Extract<Job, { kind: 'assert' }>;
export type AssertResult = AssertOutcome & { event: StoredEvent | null };

/** What one batch writes of a job: items `from` to `to` (excluded) of an assertion job, or a retraction. */
export type Part = { job: AssertJob; from: number; to: number } | { job: Extract<Job, { kind: 'retract' }> };

/** The states of the facts one write touches, read through its transaction as the write needs them. */
export class FactPlanner {
  readonly #facts = new Map<string, FactState>();
  readonly #tx: FactReader;
  /** Heads read before planning (`wantedHeads`), keyed by `headKey`; the others are read one by one. */
  readonly #heads: Map<string, FactHead> | undefined;

  constructor(tx: FactReader, heads?: Map<string, FactHead>) {
    this.#tx = tx;
    this.#heads = heads;
  }

  /**
   * The state of a fact, with the beliefs a write needs loaded: every belief (`valueKey` null: single
   * facts, blanket retractions) or those holding `valueKey` (multi facts, which may hold thousands).
   * Synchronous when the state or a prefetched head answers (nearly always: `wantedHeads`); a promise
   * only when the store must be read. Every `await` costs a few promises, and a write plans each of
   * its statements (`planBatch` awaits only a promise).
   */
  fact(key: FactKeyParts, valueKey: string | null): FactState | Promise<FactState> {
    const k = factKey(key);
    const known = this.#facts.get(k);
    if (known && (known.complete || (valueKey !== null && known.knownKeys.has(valueKey)))) return known;
    const head = this.#heads?.get(headKey(k, valueKey));
    if (head) return this.#withHead(k, key, known, head, valueKey);
    return this.#tx
      .factHead(key.namespace, key.subject, key.predicate, valueKey ?? undefined)
      .then((read) => this.#withHead(k, key, known, read, valueKey));
  }

  /**
   * Makes `e` placeable in `state`: reads its value's head when a multi fact's state cannot say where
   * that value's last retraction is, or the fact's log when `e` lands inside a single fact's history
   * (or an imported event inside any fact's). At most one log read and fold per fact per batch.
   * Synchronous (undefined) when nothing must be read, as for `fact`.
   */
  place(
    state: FactState,
    e: StoredEvent,
    pending: StoredEvent[],
    cardinality: 'single' | 'multi',
  ): Promise<void> | undefined {
    if (needsRetractions(state, e, cardinality) || needsLog(state, e, cardinality)) {
      return this.#placeRead(state, e, pending, cardinality);
    }
    return undefined;
  }

  /** `place` once the store must be read. */
  async #placeRead(
    state: FactState,
    e: StoredEvent,
    pending: StoredEvent[],
    cardinality: 'single' | 'multi',
  ): Promise<void> {
    if (needsRetractions(state, e, cardinality)) {
      const valueKey = e.valueKey as string;
      this.#merge(state, await this.#tx.factHead(state.namespace, state.subject, state.predicate, valueKey), valueKey);
    }
    if (needsLog(state, e, cardinality)) await this.#loadLog(state, pending, cardinality);
  }

  /** The belief changes of the facts planned; adds their log folds to `stats.folds`. */
  changes(stats: WriterStats): BeliefChange[] {
    for (const f of this.#facts.values()) stats.folds += f.folds;
    return [...this.#facts.values()].map(changeOf).filter((c): c is BeliefChange => c !== null);
  }

  /** The fact's state with `head` (of `valueKey`, or of all values) merged in. */
  #withHead(k: string, key: FactKeyParts, known: FactState | undefined, head: FactHead, valueKey: string | null) {
    const s = known ?? newFactState(key, head.lastObservedAt);
    this.#facts.set(k, s);
    this.#merge(s, head, valueKey);
    return s;
  }

  /** Adds what the store holds (`head`, of `valueKey` or of all values) to what this batch changed. */
  #merge(s: FactState, head: FactHead, valueKey: string | null): void {
    // A value this batch wrote or withdrew is known already: its stored belief is no longer current.
    for (const b of head.beliefs) {
      const key = b.event.valueKey as string;
      if (!s.removed.has(b.event.id) && !s.knownKeys.has(key) && !s.beliefs.has(key)) s.beliefs.set(key, b);
    }
    if (valueKey === null) s.complete = true;
    else {
      s.knownKeys.add(valueKey);
      noteRetractions(s, valueKey, head);
    }
  }

  /** Loads the fact's stored log plus what this batch already wrote to it, and folds it. */
  async #loadLog(state: FactState, pending: StoredEvent[], cardinality: 'single' | 'multi'): Promise<void> {
    const stored = await this.#tx.groupEvents(state.namespace, [
      { subject: state.subject, predicate: state.predicate },
    ]);
    const mine = pending.filter(
      (e) => e.namespace === state.namespace && e.subject === state.subject && e.predicate === state.predicate,
    );
    loadLog(state, [...stored, ...mine], cardinality);
  }
}

/**
 * The heads every fact of the batch needs, keyed by `headKey`: what `FactPlanner.fact` would ask the
 * store one by one (all beliefs of a single fact or of a blanket retraction, else those holding the
 * value). The store reads them in one go, inside the write's transaction, before the batch writes anything.
 */
export function wantedHeads(parts: Part[]): Map<string, FactHeadRequest> {
  const wanted = new Map<string, FactHeadRequest>();
  const want = ({ namespace, subject, predicate }: FactKeyParts, valueKey: string | null) => {
    const k = factKey({ namespace, subject, predicate });
    if (wanted.has(headKey(k, null))) return; // all beliefs cover any one value
    wanted.set(headKey(k, valueKey), { namespace, subject, predicate, valueKey: valueKey ?? undefined });
  };
  for (const part of parts) {
    const { job } = part;
    if (job.kind === 'assert') {
      const { from, to } = part as Extract<Part, { from: number }>;
      for (let i = from; i < to; i++) {
        const { def, event } = job.items[i] as PendingAssertion;
        want(event, def.cardinality === 'single' ? null : event.valueKey);
      }
    } else {
      const { def, subject, valueKey } = job.item;
      want({ namespace: job.namespace, subject, predicate: def.name }, def.cardinality === 'single' ? null : valueKey);
    }
  }
  return wanted;
}

/** What planning a batch reads and whom it tells. */
export interface BatchPlanOptions {
  /** The write's transaction, for the heads and logs not read beforehand. */
  tx: FactReader;
  /** The heads read for the batch, keyed as `wantedHeads` keys them. */
  heads: Map<string, FactHead>;
  clock: Clock;
  /** Gets the batch's log folds (`folds`). */
  stats: WriterStats;
  /** Settles a committed part of an assertion job (`last`: its last part). */
  settlePart: (job: AssertJob, out: AssertResult[], last: boolean) => void;
}

/** What a batch appends, given the heads of its facts; `result` settles each job once committed. */
export async function planBatch(parts: Part[], options: BatchPlanOptions): Promise<FactWrite<(() => void)[]>> {
  const { clock } = options;
  const planner = new FactPlanner(options.tx, options.heads);
  const events: StoredEvent[] = [];
  const settle: (() => void)[] = [];
  for (const part of parts) {
    if (part.job.kind === 'assert') {
      const { job, from, to } = part as Extract<Part, { from: number }>;
      const out: AssertResult[] = [];
      for (let i = from; i < to; i++) {
        const item = job.items[i] as PendingAssertion;
        const e = { ...item.event, id: newEventId(clock.now()) } as StoredEvent;
        const single = item.def.cardinality === 'single';
        // No await unless the store is read: see `FactPlanner.fact`.
        const got = planner.fact(e, single ? null : e.valueKey);
        const state = got instanceof Promise ? await got : got;
        const reading = planner.place(state, e, events, item.def.cardinality);
        if (reading) await reading;
        const r = applyAssertion(state, e, item.def.cardinality);
        if (!r.alreadyKnown) events.push(e);
        out.push({ ...r, event: r.alreadyKnown ? null : e });
      }
      settle.push(() => options.settlePart(job, out, to === job.items.length));
    } else {
      const { job } = part;
      const { item } = job;
      const single = item.def.cardinality === 'single';
      const state = await planner.fact(
        { namespace: job.namespace, subject: item.subject, predicate: item.def.name },
        single ? null : item.valueKey,
      );
      const one = item.valueKey === null ? undefined : state.beliefs.get(item.valueKey);
      const hit = item.valueKey === null ? [...state.beliefs.values()] : one ? [one] : [];
      if (hit.length === 0) {
        settle.push(() => job.done({ withdrawn: 0, event: null }));
        continue;
      }
      const now = clock.now();
      // Placed at or after every event of the fact, so it retracts exactly what is held now.
      let observedAt = Math.max(now, state.lastObservedAt ?? now);
      for (const b of hit) observedAt = Math.max(observedAt, b.event.observedAt);
      const r: StoredEvent = {
        id: newEventId(now),
        namespace: job.namespace,
        tenant: job.actor.tenant,
        subject: item.subject,
        predicate: item.def.name,
        value: item.valueKey === null ? null : item.value,
        valueKey: item.valueKey,
        retraction: true,
        kind: null,
        confidence: 1,
        source: null,
        evidence: null,
        observedAt,
        recordedAt: now,
        actor: job.actor,
      };
      applyRetraction(state, r, item.def.cardinality);
      events.push(r);
      settle.push(() => job.done({ withdrawn: hit.length, event: r }));
    }
  }
  return { events, changes: planner.changes(options.stats), result: settle };
}
