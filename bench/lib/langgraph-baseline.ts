/**
 * @module
 * The peer baseline of `bench:memory -- --store postgres`: LangGraph's JS `PostgresStore`
 * (`@langchain/langgraph-checkpoint-postgres`) on the same database (its own schema), doing the same
 * workload through its API: `get` for an exact recall, `search` with a text query for a search, `put`
 * for a remember. Items: one per (subject, predicate) for single-valued predicates (a new value
 * overwrites, as a superseded belief is not returned), one per (subject, predicate, value) otherwise;
 * namespace `[tenant, agent]`. The load is not what is compared, so it goes in bulk (multi-row INSERT
 * into the store's own table, made by its `setup()`), not through 10^6 single-row `put`s.
 */
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import pg from 'pg';
import { createProgress } from '../../src/cli/progress.ts';
import type { StoredEvent } from '../../src/store/store.ts';
import { MAIN_NAMESPACE, type MemoryDataset, type SampledFact } from './memory-data.ts';
import { type Figures, readFigures } from './memory-measure.ts';
import { summarize } from './stats.ts';

const SCHEMA = 'langgraph';
/** Predicates of the `personal` registry with one value at a time. */
const SINGLE = new Set(['name', 'favorite_color', 'lives_in', 'timezone', 'birthday']);

const itemKey = (subject: string, predicate: string, text: string) =>
  SINGLE.has(predicate) ? `${subject}|${predicate}` : `${subject}|${predicate}|${text}`;

const valueText = (e: StoredEvent) => (typeof e.value === 'string' ? e.value : JSON.stringify(e.value));

/** A LangGraph store on `url` (schema `langgraph`), with its tables made. */
export async function openLangGraph(url: string, poolSize: number): Promise<LangGraphBaseline> {
  const store = new PostgresStore({ connectionOptions: { connectionString: url, max: poolSize }, schema: SCHEMA });
  await store.setup();
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // An idle connection ended by the server (the bench's PostgreSQL stopping at the end) is no failure;
  // the store's own pool has no handler (an unhandled 'error' event ended a run), so it gets one too.
  const ignore = () => {};
  pool.on('error', ignore);
  (store as unknown as { core?: { pool?: pg.Pool } }).core?.pool?.on('error', ignore);
  return new LangGraphBaseline(store, pool);
}

/** Bulk load and measurements of the baseline. */
export class LangGraphBaseline {
  constructor(
    readonly store: PostgresStore,
    readonly pool: pg.Pool,
  ) {}

  /**
   * Inserts `count` events of `dataset` as items, 5,000 per statement, 4 statements in flight (the
   * last value of a key in a batch wins, as later puts would overwrite it).
   */
  async load(dataset: MemoryDataset, count: number, label: string): Promise<void> {
    const progress = createProgress({ label: `loading ${label}`, total: count, unit: 'items' });
    let left = count;
    const lane = async () => {
      while (left > 0) {
        const n = Math.min(5_000, left);
        left -= n;
        const rows = new Map<string, [string, string, string]>();
        for (const e of dataset.next(n)) {
          if (e.retraction) continue;
          const [tenant, agent] = e.namespace.split(':') as [string, string];
          const text = valueText(e);
          const key = itemKey(e.subject, e.predicate, text);
          const value = { subject: e.subject, predicate: e.predicate, value: e.value, observed_at: e.observedAt };
          rows.set(`${e.namespace}\u0000${key}`, [`${tenant}:${agent}`, key, JSON.stringify(value)]);
        }
        // In key order, so two statements upserting the same keys lock them in one order (no deadlock).
        const list = [...rows.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([, r]) => r);
        await this.pool.query(
          `INSERT INTO "${SCHEMA}".store (namespace_path, key, value)
           SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
           ON CONFLICT (namespace_path, key) DO UPDATE SET value = EXCLUDED.value, updated_at = CURRENT_TIMESTAMP`,
          [list.map((r) => r[0]), list.map((r) => r[1]), list.map((r) => r[2])],
        );
        progress.tick(n);
      }
    };
    await Promise.all([lane(), lane(), lane(), lane()]);
    progress.done();
  }

  /** One round of get, search and put, the shape of `measureServer`'s (fields it has no figure for are NaN). */
  async measure(
    wl: { facts: readonly SampledFact[]; queries: string[][] },
    round: number,
    writes: MemoryDataset,
    clients: number,
    manyClients: number,
  ): Promise<Figures> {
    const ns = [MAIN_NAMESPACE.tenant, MAIN_NAMESPACE.agent];
    const fact = (i: number) => wl.facts[(i + round * 7919) % wl.facts.length] as SampledFact;
    const get = (i: number) => this.store.get(ns, itemKey(fact(i).subject, fact(i).predicate, fact(i).text));
    await timed(1, 200, 1_000, get);
    const getOne = await timed(1, 3_000, 4_000, get);
    const getMany = await timed(clients, 20_000, 2_500, get);
    let hits = 0;
    let zero = 0;
    // A LangGraph text search computes to_tsvector of every item of the namespace (no index serves
    // it), so at 10^6 events one takes seconds: few queries, a time budget.
    const search = await timed(1, 200, 8_000, async (i) => {
      const q = wl.queries[(i + round * 104729) % wl.queries.length] as string[];
      const found = await this.store.search(ns, { query: q.join(' '), limit: 50 });
      hits += found.length;
      if (found.length === 0) zero++;
    });
    let n = 0;
    const putOne = async () => {
      const predicate = 'note';
      const subject = writes.randomSubject();
      const value = `${writes.words(5)} lg${round}r${n++}`;
      await this.store.put(ns, itemKey(subject, predicate, value), { subject, predicate, value });
    };
    const put = await timed(clients, 40_000, 4_000, putOne);
    // As many callers as wrk's connections in the many-connection row (they queue for the pool).
    const putMany = await timed(manyClients, 80_000, 4_000, putOne);
    return {
      ...readFigures(getOne.lat, getMany.perSecond, search.lat, search.lat.length, hits, zero),
      remembers: put.perSecond,
      perCommit: 1,
      remembersWrk: Number.NaN,
      remembersMany: putMany.perSecond,
      rememberP99Many: summarize(putMany.lat).p99,
      idleMany: Number.NaN,
      cpuPerRemember: Number.NaN,
      rememberP50: summarize(put.lat).p50,
      rememberP99: summarize(put.lat).p99,
    };
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.store.stop(), this.pool.end()]);
  }
}

/** Runs `op` from `workers` concurrent loops until `max` calls or `maxMs`; latencies in ms. */
async function timed(
  workers: number,
  max: number,
  maxMs: number,
  op: (i: number) => Promise<unknown>,
): Promise<{ lat: number[]; perSecond: number }> {
  const lat: number[] = [];
  let next = 0;
  const start = performance.now();
  const deadline = start + maxMs;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < max && performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        await op(i);
        lat.push(performance.now() - t0);
      }
    }),
  );
  return { lat, perSecond: (lat.length / (performance.now() - start)) * 1000 };
}
