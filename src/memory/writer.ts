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
 * Imports and rebuilds run alone in this replica, after the batches in flight. What a batch writes
 * (events, belief changes) is planned in `writer-plan.ts`.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../common/clock.ts';
import { afterLightRequests, leaveLightLane, lightInFlight, type Ticket } from '../common/light-first.ts';
import type { Actor, FactHead, FactStore, StoredEvent } from '../store/fact-store.ts';
import { StaleRegistryError } from '../store/stale-registry.ts';
import { applyAssertion, applyRetraction } from './fact-state.ts';
import { compareEvents } from './fold.ts';
import type { Job, PendingAssertion, PendingRetraction, PlannedRegistry, WriterStats } from './writer-jobs.ts';
import {
  type AssertJob,
  type AssertResult,
  FactPlanner,
  factKey,
  type Part,
  planBatch,
  wantedHeads,
} from './writer-plan.ts';

/** Most jobs in one batch. */
const MAX_BATCH = 512;

/**
 * Most statements (assertions, retractions) in one batch: a transaction of 500 took ~20 ms of the
 * event loop (bench:fairness), one of 32 about 1-2 ms. A remember with more is written in parts.
 */
export const MAX_BATCH_STATEMENTS = 32;

type WriteJob = Exclude<Job, { kind: 'exclusive' }>;

/** Most batches in a row that take new jobs before a waiting rest of a big remember (see `#take`). */
export const MAX_PASSED_OVER = 4;

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
  /** Batches taken in a row with new jobs only while the rest of a big remember waited. */
  #passedOver = 0;
  /** Ends the wait of a batch of later parts for light requests (a new job came). */
  #wake: (() => void) | null = null;

  constructor(store: FactStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
    this.#concurrency = Math.max(1, Math.floor(store.writeConcurrency ?? 1));
  }

  /**
   * Writes assertions (in order); resolves with one outcome per item.
   * @param lane the ticket of the request writing them (heavy once its batch is written in parts)
   * @throws {StaleRegistryError} when `registry` is no longer the tenant's newest stored version
   */
  assert(items: PendingAssertion[], registry?: PlannedRegistry, lane?: Ticket | null): Promise<AssertResult[]> {
    // Written in parts: the request is heavy, its later parts wait for light requests (not for itself).
    if (items.length > MAX_BATCH_STATEMENTS) leaveLightLane(lane);
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
        const planner = new FactPlanner(tx);
        const done: StoredEvent[] = [];
        for (const e of fresh) {
          const cardinality = await cardinalityOf(e);
          const needAll = cardinality === 'single' || e.valueKey === null;
          const state = await planner.fact(e, needAll ? null : e.valueKey);
          await planner.place(state, e, done, cardinality);
          if (e.retraction) applyRetraction(state, e, cardinality);
          else applyAssertion(state, e, cardinality, true);
          // A restatement changes no belief, but it is stored: later events are placed after it.
          state.lastObservedAt = Math.max(state.lastObservedAt ?? e.observedAt, e.observedAt);
          done.push(e);
        }
        return { events: incoming, changes: planner.changes(this.stats), result: done.length };
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
    this.#wake?.();
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
    this.#inFlight++;
    try {
      // Only later parts of big remembers are left: they wait while light requests are in flight
      // (`light-first.ts`), the slot held, until one of those queues a job (written first, at once).
      if (this.#ahead().fresh.length === 0 && lightInFlight() > 0) {
        await Promise.race([afterLightRequests(), new Promise<void>((wake) => (this.#wake = wake))]);
        this.#wake = null;
      }
      const batch = this.#take();
      // Jobs queued from now on may start the next batch while this one is written (up to the concurrency).
      this.#schedule();
      if (batch.length > 0) await this.#writeBatch(batch);
    } finally {
      this.#inFlight--;
      this.#schedule();
    }
  }

  /**
   * The write jobs queued before the first exclusive one: those not yet started (`fresh`) and the rests
   * of big remembers whose earlier parts are written (`waiting`), each in queue order.
   */
  #ahead(): { fresh: WriteJob[]; waiting: WriteJob[] } {
    const fresh: WriteJob[] = [];
    const waiting: WriteJob[] = [];
    for (const job of this.#queue) {
      if (job.kind === 'exclusive') break;
      (this.#written.has(job as AssertJob) ? waiting : fresh).push(job);
    }
    return { fresh, waiting };
  }

  /**
   * Takes the next batch off the queue: jobs up to the first exclusive one, at most
   * `MAX_BATCH_STATEMENTS` statements. Jobs not yet started go first, in order; the rest of a big
   * remember is taken when none is queued, or first after `MAX_PASSED_OVER` batches passed it over.
   * So a small write rarely waits behind another tenant's big one for more than the part being
   * written, and the big one still ends under a steady stream of small ones. A job that does not fit
   * whole starts a batch of its own: its first part, or its next (the rest is queued again once the
   * part commits: `#settlePart`).
   */
  #take(): Part[] {
    const { fresh, waiting } = this.#ahead();
    let pool = fresh;
    if (waiting.length === 0 || fresh.length === 0) {
      pool = [...fresh, ...waiting];
      this.#passedOver = 0;
    } else if (++this.#passedOver > MAX_PASSED_OVER) {
      pool = [waiting[0] as WriteJob, ...fresh];
      this.#passedOver = 0;
    }
    const parts: Part[] = [];
    let room = MAX_BATCH_STATEMENTS;
    for (const job of pool) {
      if (room === 0 || parts.length >= MAX_BATCH) break;
      if (job.kind === 'retract') {
        parts.push({ job });
        room--;
        continue;
      }
      const from = this.#written.get(job)?.length ?? 0;
      const to = Math.min(job.items.length, from + room);
      if (to < job.items.length && parts.length > 0) break;
      parts.push({ job, from, to });
      room -= to - from;
    }
    const taken = new Set(parts.map((p) => p.job));
    for (let i = this.#queue.length - 1; i >= 0; i--)
      if (taken.has(this.#queue[i] as WriteJob)) this.#queue.splice(i, 1);
    return parts;
  }

  async #writeBatch(parts: Part[]): Promise<void> {
    const wanted = wantedHeads(parts);
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
        const settlePart = (job: AssertJob, out: AssertResult[], last: boolean) => this.#settlePart(job, out, last);
        return planBatch(parts, { tx, heads, clock: this.#clock, stats: this.stats, settlePart });
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
}
