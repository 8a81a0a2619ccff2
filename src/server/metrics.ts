/**
 * @module
 * Prometheus metrics of one memory server (its own registry, so several servers can live in one
 * process): request durations by route, event-loop delay, key cache hits/misses and group-commit counters
 * (counters read from the totals the key cache and the writer keep); and only with `storeFigures` (a metrics
 * token is set) events appended and stored, figures of every tenant's data.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { KeyService } from '../auth/key-service.ts';
import type { WriterStats } from '../memory/writer-jobs.ts';
import type { FactStore } from '../store/fact-store.ts';

/** Metrics of one server. */
export interface MemoryMetrics {
  registry: Registry;
  requestDuration: Histogram<'method' | 'route' | 'status'>;
  eventsAppended: Counter;
  exchanges: Counter<'outcome'>;
  /** Changes told by the store (other replicas' revocations, registry versions, purges; resyncs). */
  storeChanges: Counter<'kind'>;
  /** Whole-cache flushes after the store's change channel came back. */
  cacheFlushes: Counter;
  /** How late the event loop ran a timer (`loop-watch.ts`), seconds. */
  loopDelay: Histogram;
}

/** Creates the metrics; `collectDefaults` adds process metrics (off in tests). */
export function createMemoryMetrics(deps: {
  store: FactStore;
  keys: KeyService;
  writes: Readonly<WriterStats>;
  collectDefaults?: boolean;
  /** Add the event counts (all tenants' data): only behind a metrics token. @default false */
  storeFigures?: boolean;
}): MemoryMetrics {
  const storeRegisters = (registry: Registry) => (deps.storeFigures ? [registry] : []);
  const registry = new Registry();
  if (deps.collectDefaults) collectDefaultMetrics({ register: registry, prefix: 'tether_' });
  const requestDuration = new Histogram({
    name: 'tether_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5],
    registers: [registry],
  });
  const eventsAppended = new Counter({
    name: 'tether_memory_events_appended_total',
    help: 'fact events appended',
    registers: storeRegisters(registry),
  });
  const exchanges = new Counter({
    name: 'tether_auth_exchanges_total',
    help: 'workload token exchanges by outcome (ok or error code)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const storeChanges = new Counter({
    name: 'tether_store_notifications_total',
    help: 'changes the store told this replica of, by kind (key_revoked, registry, purged, resync)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const cacheFlushes = new Counter({
    name: 'tether_store_cache_flushes_total',
    help: 'key and registry caches flushed whole because the store change channel had dropped',
    registers: [registry],
  });
  new Gauge({
    name: 'tether_memory_events_stored',
    help: 'fact events stored',
    registers: storeRegisters(registry),
    async collect() {
      this.set(await deps.store.countEvents());
    },
  });
  // Totals kept by the key cache and the writer, read at scrape time: counters (they only grow), so `_total`.
  const total = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  total('tether_auth_key_cache_hits_total', 'key verifications answered from the cache', () => deps.keys.stats.hits);
  total('tether_auth_key_cache_misses_total', 'key verifications that read the store', () => deps.keys.stats.misses);
  total(
    'tether_memory_write_batches_total',
    'store transactions written for remembers and forgets (group commits)',
    () => deps.writes.batches,
  );
  total(
    'tether_memory_write_jobs_total',
    'remember and forget calls those transactions carried (jobs / batches = mean batch size)',
    () => deps.writes.jobs,
  );
  // Not tenants' data: how much of the read workers' answer slab is out (slow readers hold slots).
  const lent = deps.store.lentAnswerStats?.bind(deps.store);
  if (lent) {
    total(
      'tether_read_answers_lent_total',
      "answers sent from the read workers' shared slab (not moved)",
      () => lent().lent,
    );
    new Gauge({
      name: 'tether_read_answer_slots_held',
      help: "slots of the read workers' answer slab held now (answers being written; all held: answers are moved)",
      registers: [registry],
      collect() {
        this.set(lent().slotsHeld);
      },
    });
  }
  const loopDelay = new Histogram({
    name: 'tether_event_loop_delay_seconds',
    help: 'how late the event loop ran a timer sampled every 20 ms (time it was held by some work)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return { registry, requestDuration, eventsAppended, exchanges, storeChanges, cacheFlushes, loopDelay };
}
