/**
 * @module
 * Prometheus metrics of one gateway, in its own prom-client Registry (several gateways may run in one
 * process, e.g. in tests). Hot-path children are pre-bound per service so a request does no label
 * hashing. Served by admin-server.ts at `/metrics`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ServiceState } from './state.ts';

/** Pre-bound per-service request metrics used by the proxy. */
export interface ServiceRequestMetrics {
  /** Index = status class (1..5). */
  byClass: Array<{ inc(): void }>;
  duration: { observe(seconds: number): void };
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** All metrics of one gateway. */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'tether_gateway_requests_total',
    help: 'Requests proxied, by service and status class',
    labelNames: ['service', 'class'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'tether_gateway_request_duration_seconds',
    help: 'Time from request to response end through the gateway',
    labelNames: ['service'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly reclaims = new Counter({
    name: 'tether_gateway_reclaims_total',
    help: 'Instances given up at max-scale / max-instances so a waiting session could start (pressure policy)',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly instanceStarts = new Counter({
    name: 'tether_gateway_instance_starts_total',
    help: 'Instances started, by service and whether for the warm pool',
    labelNames: ['service', 'warm'] as const,
    registers: [this.registry],
  });
  readonly startDuration = new Histogram({
    name: 'tether_gateway_instance_start_duration_seconds',
    help: 'Cold start: spawn to ready',
    labelNames: ['service'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly resumeDuration = new Histogram({
    name: 'tether_gateway_instance_resume_duration_seconds',
    help: 'Resume of a paused instance',
    labelNames: ['service'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly warmClaims = new Counter({
    name: 'tether_gateway_warm_claims_total',
    help: 'New sessions served by a warm-pool instance',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly queueTimeouts = new Counter({
    name: 'tether_gateway_queue_timeouts_total',
    help: 'Requests answered 503 by the queue (timeout or full)',
    labelNames: ['service'] as const,
    registers: [this.registry],
  });
  readonly sessionsEnded = new Counter({
    name: 'tether_gateway_sessions_ended_total',
    help: 'Sessions ended, by reason (idle, expired, instance_gone)',
    labelNames: ['service', 'reason'] as const,
    registers: [this.registry],
  });

  /** @param services read at scrape time for the gauges */
  constructor(services: () => Iterable<ServiceState>) {
    new Gauge({
      name: 'tether_gateway_instances',
      help: 'Instances by service and state (warm counted apart)',
      labelNames: ['service', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const svc of services()) {
          const counts: Record<string, number> = { starting: 0, running: 0, paused: 0, stopping: 0, warm: 0 };
          for (const i of svc.instances.values())
            counts[i.warm ? 'warm' : i.state] = (counts[i.warm ? 'warm' : i.state] ?? 0) + 1;
          for (const [state, n] of Object.entries(counts)) this.set({ service: svc.config.name, state }, n);
        }
      },
    });
    new Gauge({
      name: 'tether_gateway_sessions',
      help: 'Live sessions by service',
      labelNames: ['service'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const svc of services()) this.set({ service: svc.config.name }, svc.sessions.size);
      },
    });
    new Gauge({
      name: 'tether_gateway_queue_length',
      help: 'Requests waiting for a slot, by service',
      labelNames: ['service'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const svc of services()) this.set({ service: svc.config.name }, svc.queue.length);
      },
    });
  }

  /** Pre-binds the per-request metrics of one service. */
  forService(name: string): ServiceRequestMetrics {
    const byClass = [0, 1, 2, 3, 4, 5].map((c) => this.requests.labels(name, `${c}xx`));
    return { byClass, duration: this.requestDuration.labels(name) };
  }
}
