/**
 * @module
 * Sets up a gateway core over the fake runtime and a ManualClock for core tests, plus `hit` (one whole
 * request) and `settle` (let starts, exits and pokes finish). No servers, no processes.
 */
import { ManualClock } from '../../../src/common/clock.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { createGatewayCore, type GatewayCore } from '../../../src/gateway/core.ts';
import { parseManifestText } from '../../../src/gateway/services/load-services.ts';
import type { ServiceState, SessionEntry } from '../../../src/gateway/state.ts';
import { MemorySessionStore } from '../../../src/sessions/memory-store.ts';
import { FakeRuntime } from './fake-runtime.ts';
import { serviceYaml } from './harness.ts';

/** Options of `setupCore`. */
export interface SetupOptions {
  queueTimeoutMs?: number;
  maxQueue?: number;
  maxInstances?: number;
  /** New sessions per client address per minute. @default 0 (no limit) */
  newSessionsPerMinute?: number;
  /** Percent of a service's capacity one address keeps while others wait. @default 50 */
  addressShare?: number;
  /** Extra services (name -> annotations), after `svc`. */
  more?: Record<string, Record<string, string>>;
}

/** A core with one service `svc` (and `more`), a fake runtime and a manual clock. */
export function setupCore(annotations: Record<string, string>, opts: SetupOptions = {}) {
  const clock = new ManualClock();
  const runtime = new FakeRuntime();
  const store = new MemorySessionStore();
  const yaml = [serviceYaml('svc', annotations), ...Object.entries(opts.more ?? {}).map(([n, a]) => serviceYaml(n, a))];
  const core = createGatewayCore({
    services: parseManifestText(yaml.join('---\n'), '/m/svc.yaml'),
    domain: 'example.com',
    runtime,
    store,
    clock,
    log: silentLogger(),
    queueTimeoutMs: opts.queueTimeoutMs ?? 60_000,
    maxQueue: opts.maxQueue,
    maxInstances: opts.maxInstances,
    newSessionsPerMinute: opts.newSessionsPerMinute,
    addressShare: opts.addressShare,
    startTimeoutMs: 5000,
  });
  const svc = core.services[0] as ServiceState;
  return { clock, runtime, store, core, svc };
}

/** A signal that never aborts. */
export const never = new AbortController().signal;

/** Acquires and releases one request of `key` (a whole request). */
export async function hit(core: GatewayCore, svc: ServiceState, key: string): Promise<SessionEntry> {
  const s = await core.scheduler.acquire(svc, key, never);
  core.scheduler.release(s);
  return s;
}

/** Lets pending starts, exits and pokes settle. */
export async function settle(core: GatewayCore, svc: ServiceState): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await Promise.all([...svc.instances.values()].map((x) => x.ready.catch(() => {})));
    await new Promise((r) => setImmediate(r));
  }
  core.reconcile();
}
