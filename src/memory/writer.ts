/**
 * @module
 * The writer of one memory server replica: remembers and forgets queue up and are written in batches
 * (group commit): every job that arrives while a batch is being written joins the next one, which
 * costs one store operation for all of them (`FactStore.writeFacts`: the batch's facts locked, their
 * heads read and the events appended under one transaction, so replicas sharing a store never write
 * from a stale read). A batch holds at most `MAX_BATCH_STATEMENTS` statements: a bigger remember is
 * written as several batches, one part at a time, its rest going back to the end of the queue after
 * each part commits, so the jobs queued meanwhile (other tenants') are written between two parts and
 * no transaction holds the event loop long. Jobs otherwise apply in arrival order; each fact's
 * beliefs (the "now" projection) are updated in the same transaction as its events. Up to
 * `FactStore.writeConcurrency` batches are written at once (SQLite: one; PostgreSQL: several, each
 * fact's lock ordering those of one fact, as it does for two replicas; never two parts of one job).
 * Imports and rebuilds run alone in this replica, after the batches in flight.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../common/clock.ts';
import { newEventId } from '../common/ids.ts';
import type {
  Actor,
  BeliefChange,
  FactHead,
  FactHeadRequest,
  FactReader,
  FactStore,
  FactWrite,
  StoredEvent,
} from '../store/fact-store.ts';
import { StaleRegistryError } from '../store/stale-registry.ts';
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
import { compareEvents } from './fold.ts';
import type { Job, PendingAssertion, PendingRetraction, PlannedRegistry, WriterStats } from './writer-jobs.ts';

/** What names a fact. */
type FactKeyParts = { namespace: string; subject: string; predicate: string };

/** Identifies a fact in the writer's maps. */
const factKey = (f: FactKeyParts): string => `${f.namespace}\u0000${f.subject}\u0000${f.predicate}`;

/** Identifies a prefetched head: of all the fact's beliefs (`valueKey` null) or of one value's. */
const headKey = (fact: string, valueKey: string | null): string =>
  valueKey === null ? `${fact}\u0000*` : `${fact}\u0001${valueKey}`;

/** Most jobs in one batch. */
const MAX_BATCH = 512;

/**
 * Most statements (assertions, retractions) in one batch: a transaction of 500 took ~20 ms of the
 * event loop (bench:fairness), one of 64 a few ms. A remember with more is written in parts.
 */
export const MAX_BATCH_STATEMENTS = 64;

type WriteJob = Exclude<Job, { kind: 'exclusive' }>;
type AssertJob = Extract<Job, { kind: 'assert' }>;
type AssertResult = AssertOutcome & { event: StoredEvent | null };

/** What one batch writes of a job: items `from` to `to` (excluded) of an assertion job, or a retraction. */
type Part = { job: AssertJob; from: number; to: number } | { job: Extract<Job, { kind: 'retract' }> };

/** Most event-loop turns a batch waits for more jobs after the one that queued it (see `#schedule`). */
const MAX_EXTRA_TURNS = 3;

/** Batches writes to a store. */
export class MemoryWriter {
  readonly stats: WriterStats = { batches: 0, jobs: 0, folds: 0 };
  readonly #store: FactStore;
  readonly #clock: Clock;
  readonly #queue: Job[] = [];
  readonly #concurrency: number;
  /** Batches being written. */
  #inFlight = 0;
  #exclusive = false;
  #scheduled = false;
  /** Outcomes of the parts of a big assertion job written so far (it is done once all are). */
  readonly #written = new Map<AssertJob, AssertResult[]>();

  constructor(store: FactStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
    this.#concurrency = Math.max(1, Math.floor(store.writeConcurrency ?? 1));
  }

  /**
   * Writes assertions (in order); resolves with one outcome per item.
   * @throws {StaleRegistryError} when `registry` is no longer the tenant's newest stored version
   */
  assert(items: PendingAssertion[], registry?: PlannedRegistry): Promise<AssertResult[]> {
    return new Promise((done, fail) => this.#push({ kind: 'assert', items, registry, done, fail }));
  }

  /**
   * Retracts held values of one fact; resolves with how many were withdrawn.
   * @throws {StaleRegistryError} when `target.registry` is no longer the tenant's newest stored version
   */
  retract(
    target: { namespace: string; actor: Actor; registry?: PlannedRegistry },
    item: PendingRetraction,
  ): Promise<{ withdrawn: number; event: StoredEvent | null }> {
    return new Promise((done, fail) => this.#push({ kind: 'retract', ...target, item, done, fail }));
  }

  /**
   * Imports events keeping their ids (ids already stored are skipped) and updates the beliefs of the
   * facts they touch as it goes — incrementally when an event is the newest of its fact, else by
   * folding that fact's log. Runs alone. Returns how many were inserted; `held` is told how long
   * (ms) it held the writer, plan and commit (the import sizes its next chunk by it).
   */
  import(
    events: StoredEvent[],
    cardinalityOf: (e: StoredEvent) => Promise<'single' | 'multi'>,
    held?: (ms: number) => void,
  ): Promise<number> {
    let inserted = 0;
    const lock = [...new Map(events.map((e) => [factKey(e), e])).values()];
    return this.exclusive(async () => {
      const started = performance.now();
      inserted = await this.#store.writeFacts({ lock, heads: [] }, async (_heads, tx) => {
        const existing = await tx.existingEventIds(events.map((e) => e.id));
        const seen = new Set<string>();
        // Stored in the order given (an export's: how the source wrote them), which search's "newest
        // written first" reproduces; folded in fact order, which the beliefs need.
        const incoming = events.filter((e) => !existing.has(e.id) && !seen.has(e.id) && seen.add(e.id));
        const fresh = [...incoming].sort(compareEvents);
        const facts = new Map<string, FactState>();
        const done: StoredEvent[] = [];
        for (const e of fresh) {
          const cardinality = await cardinalityOf(e);
          const needAll = cardinality === 'single' || e.valueKey === null;
          const state = await this.#fact(tx, facts, e, needAll ? null : e.valueKey);
          await this.#place(tx, state, e, done, cardinality);
          if (e.retraction) applyRetraction(state, e, cardinality);
          else applyAssertion(state, e, cardinality, true);
          // A restatement changes no belief, but it is stored: later events are placed after it.
          state.lastObservedAt = Math.max(state.lastObservedAt ?? e.observedAt, e.observedAt);
          done.push(e);
        }
        this.#countFolds(facts);
        const changes = [...facts.values()].map(changeOf).filter((c): c is BeliefChange => c !== null);
        return { events: incoming, changes, result: done.length };
      });
      held?.(performance.now() - started);
    }).then(() => inserted);
  }

  /** Runs `run` with no batch in flight (imports, projection rebuilds). */
  exclusive(run: () => Promise<void>): Promise<void> {
    return new Promise((done, fail) => this.#push({ kind: 'exclusive', run, done, fail }));
  }

  #push(job: Job): void {
    this.#queue.push(job);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#exclusive || this.#scheduled || this.#queue.length === 0) return;
    if (this.#inFlight >= this.#concurrency) return;
    // An exclusive job waits for the batches in flight; the last one to finish schedules it.
    if (this.#queue[0]?.kind === 'exclusive' && this.#inFlight > 0) return;
    this.#scheduled = true;
    // setImmediate: requests parsed in this turn of the event loop all join the batch. Then the batch
    // waits one more turn, and another while a turn brings new jobs (up to MAX_EXTRA_TURNS): that
    // turn's poll phase reads requests that have already arrived, without waiting for any (an
    // immediate is pending). Closed-loop clients otherwise split into two waves that alternate, one
    // sending while the other's commit runs, and pay two commits where one would do.
    let seen = -1;
    let turns = 0;
    const turn = () => {
      if (turns < MAX_EXTRA_TURNS && this.#queue.length > seen && this.#queue.length < MAX_BATCH) {
        seen = this.#queue.length;
        turns++;
        setImmediate(turn);
        return;
      }
      this.#scheduled = false;
      void this.#flush();
    };
    setImmediate(turn);
  }

  async #flush(): Promise<void> {
    const first = this.#queue[0];
    if (!first) return;
    if (first.kind === 'exclusive') {
      if (this.#inFlight > 0) return;
      this.#queue.shift();
      this.#exclusive = true;
      try {
        await first.run().then(first.done, first.fail);
      } finally {
        this.#exclusive = false;
        this.#schedule();
      }
      return;
    }
    const batch = this.#take();
    this.#inFlight++;
    // Jobs queued from now on may start the next batch while this one is written (up to the concurrency).
    this.#schedule();
    try {
      await this.#writeBatch(batch);
    } finally {
      this.#inFlight--;
      this.#schedule();
    }
  }

  /**
   * Takes the next batch off the queue: jobs in order up to `MAX_BATCH_STATEMENTS` statements, the
   * last one maybe only in part (its rest is queued again once this part commits: `#settle`).
   */
  #take(): Part[] {
    const parts: Part[] = [];
    let room = MAX_BATCH_STATEMENTS;
    for (let job = this.#queue[0]; job && job.kind !== 'exclusive' && room > 0 && parts.length < MAX_BATCH; ) {
      this.#queue.shift();
      if (job.kind === 'retract') {
        parts.push({ job });
        room--;
      } else {
        const from = this.#written.get(job)?.length ?? 0;
        const to = Math.min(job.items.length, from + room);
        parts.push({ job, from, to });
        room -= to - from;
      }
      job = this.#queue[0];
    }
    return parts;
  }

  async #writeBatch(parts: Part[]): Promise<void> {
    const wanted = this.#wanted(parts);
    const jobs = parts.map((p) => p.job);
    const registries = [
      ...new Map(
        jobs.flatMap((j) => (j.registry ? [[`${j.registry.tenant}\u0000${j.registry.versionId}`, j.registry]] : [])),
      ).values(),
    ];
    let settle: (() => void)[];
    try {
      // One store operation: the facts are locked and their heads read in the transaction that writes.
      settle = await this.#store.writeFacts({ heads: [...wanted.values()], registries }, async (list, tx) => {
        const heads = new Map([...wanted.keys()].map((k, i) => [k, list[i] as FactHead]));
        return this.#plan(parts, heads, tx);
      });
      this.stats.batches++;
      this.stats.jobs += jobs.length;
    } catch (err) {
      if (err instanceof StaleRegistryError) {
        // Nothing of this batch was written. Jobs validated with an old version fail, to be validated
        // again (their predicate may have another cardinality now; parts written before stay written);
        // the others go first in line as they were.
        const stale = (j: WriteJob) => !!j.registry && err.newest.get(j.registry.tenant) !== j.registry.versionId;
        for (const job of jobs) if (stale(job)) this.#fail(job, err);
        this.#queue.unshift(...jobs.filter((j) => !stale(j)));
        return;
      }
      for (const job of jobs) this.#fail(job, err);
      return;
    }
    for (const s of settle) s();
  }

  #fail(job: WriteJob, err: unknown): void {
    if (job.kind === 'assert') this.#written.delete(job);
    job.fail(err);
  }

  /**
   * Settles a committed part of an assertion job: the job is done with all its outcomes when this was
   * its last part; else its rest is queued again, behind the jobs queued meanwhile (fair to other
   * tenants) but before any exclusive job (an import or a registry rebuild comes after the whole job,
   * as it would have without parts).
   */
  #settlePart(job: AssertJob, out: AssertResult[], last: boolean): void {
    const all = [...(this.#written.get(job) ?? []), ...out];
    if (last) {
      this.#written.delete(job);
      job.done(all);
      return;
    }
    this.#written.set(job, all);
    const exclusive = this.#queue.findIndex((j) => j.kind === 'exclusive');
    if (exclusive < 0) this.#queue.push(job);
    else this.#queue.splice(exclusive, 0, job);
  }

  /** What a batch appends, given the heads of its facts; `result` settles each job once committed. */
  async #plan(parts: Part[], heads: Map<string, FactHead>, tx: FactReader): Promise<FactWrite<(() => void)[]>> {
    const facts = new Map<string, FactState>();
    const events: StoredEvent[] = [];
    const settle: (() => void)[] = [];
    for (const part of parts) {
      if (part.job.kind === 'assert') {
        const { job, from, to } = part as Extract<Part, { from: number }>;
        const out: AssertResult[] = [];
        for (let i = from; i < to; i++) {
          const item = job.items[i] as PendingAssertion;
          const e = { ...item.event, id: newEventId(this.#clock.now()) } as StoredEvent;
          const single = item.def.cardinality === 'single';
          const state = await this.#fact(tx, facts, e, single ? null : e.valueKey, heads);
          await this.#place(tx, state, e, events, item.def.cardinality);
          const r = applyAssertion(state, e, item.def.cardinality);
          if (!r.alreadyKnown) events.push(e);
          out.push({ ...r, event: r.alreadyKnown ? null : e });
        }
        settle.push(() => this.#settlePart(job, out, to === job.items.length));
      } else {
        const { job } = part;
        const { item } = job;
        const single = item.def.cardinality === 'single';
        const state = await this.#fact(
          tx,
          facts,
          { namespace: job.namespace, subject: item.subject, predicate: item.def.name },
          single ? null : item.valueKey,
          heads,
        );
        const one = item.valueKey === null ? undefined : state.beliefs.get(item.valueKey);
        const hit = item.valueKey === null ? [...state.beliefs.values()] : one ? [one] : [];
        if (hit.length === 0) {
          settle.push(() => job.done({ withdrawn: 0, event: null }));
          continue;
        }
        const now = this.#clock.now();
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
    this.#countFolds(facts);
    const changes = [...facts.values()].map(changeOf).filter((c): c is BeliefChange => c !== null);
    return { events, changes, result: settle };
  }

  /**
   * The state of a fact, with the beliefs a write needs loaded: every belief (`valueKey` null: single
   * facts, blanket retractions) or those holding `valueKey` (multi facts, which may hold thousands).
   */
  async #fact(
    tx: FactReader,
    facts: Map<string, FactState>,
    key: FactKeyParts,
    valueKey: string | null,
    heads?: Map<string, FactHead>,
  ): Promise<FactState> {
    const k = factKey(key);
    const known = facts.get(k);
    if (known && (known.complete || (valueKey !== null && known.knownKeys.has(valueKey)))) return known;
    const head =
      heads?.get(headKey(k, valueKey)) ??
      (await tx.factHead(key.namespace, key.subject, key.predicate, valueKey ?? undefined));
    const s = known ?? newFactState(key, head.lastObservedAt);
    facts.set(k, s);
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

  /**
   * Makes `e` placeable in `state`: reads its value's head when a multi fact's state cannot say where
   * that value's last retraction is, or the fact's log when `e` lands inside a single fact's history
   * (or an imported event inside any fact's). At most one log read and fold per fact per batch.
   */
  async #place(
    tx: FactReader,
    state: FactState,
    e: StoredEvent,
    pending: StoredEvent[],
    cardinality: 'single' | 'multi',
  ): Promise<void> {
    if (needsRetractions(state, e, cardinality)) {
      const valueKey = e.valueKey as string;
      this.#merge(state, await tx.factHead(state.namespace, state.subject, state.predicate, valueKey), valueKey);
    }
    if (needsLog(state, e, cardinality)) await this.#loadLog(tx, state, pending, cardinality);
  }

  #countFolds(facts: Map<string, FactState>): void {
    for (const f of facts.values()) this.stats.folds += f.folds;
  }

  /**
   * The heads every fact of the batch needs, keyed by `headKey`: what `#fact` would ask the store one
   * by one (all beliefs of a single fact or of a blanket retraction, else those holding the value).
   * The store reads them in one go, inside the write's transaction, before the batch writes anything.
   */
  #wanted(parts: Part[]): Map<string, FactHeadRequest> {
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
        want(
          { namespace: job.namespace, subject, predicate: def.name },
          def.cardinality === 'single' ? null : valueKey,
        );
      }
    }
    return wanted;
  }

  /** Loads the fact's stored log plus what this batch already wrote to it, and folds it. */
  async #loadLog(
    tx: FactReader,
    state: FactState,
    pending: StoredEvent[],
    cardinality: 'single' | 'multi',
  ): Promise<void> {
    const stored = await tx.groupEvents(state.namespace, [{ subject: state.subject, predicate: state.predicate }]);
    const mine = pending.filter(
      (e) => e.namespace === state.namespace && e.subject === state.subject && e.predicate === state.predicate,
    );
    loadLog(state, [...stored, ...mine], cardinality);
  }
}
