/**
 * @module
 * Prometheus metrics of one memory server (its own registry, so several servers can live in one
 * process): request durations by route, event-loop delay, key cache hits/misses, group-commit counters; and only with
 * `storeFigures` (a metrics token is set) events appended and stored, figures of every tenant's data.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { KeyService } from '../auth/key-service.ts';
import type { WriterStats } from '../memory/writer-jobs.ts';
import type { Store } from '../store/store.ts';

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
  store: Store;
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
  new Gauge({
    name: 'tether_auth_key_cache_hits',
    help: 'key verifications answered from the cache',
    registers: [registry],
    collect() {
      this.set(deps.keys.stats.hits);
    },
  });
  new Gauge({
    name: 'tether_auth_key_cache_misses',
    help: 'key verifications that read the store',
    registers: [registry],
    collect() {
      this.set(deps.keys.stats.misses);
    },
  });
  new Gauge({
    name: 'tether_memory_write_batches',
    help: 'store transactions written for remembers and forgets (group commits)',
    registers: [registry],
    collect() {
      this.set(deps.writes.batches);
    },
  });
  new Gauge({
    name: 'tether_memory_write_jobs',
    help: 'remember and forget calls those transactions carried (jobs / batches = mean batch size)',
    registers: [registry],
    collect() {
      this.set(deps.writes.jobs);
    },
  });
  const loopDelay = new Histogram({
    name: 'tether_event_loop_delay_seconds',
    help: 'how late the event loop ran a timer sampled every 20 ms (time it was held by some work)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return { registry, requestDuration, eventsAppended, exchanges, storeChanges, cacheFlushes, loopDelay };
}
