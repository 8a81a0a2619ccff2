/**
 * @module
 * Applies a new set of service manifests to a running gateway core (SIGHUP). A new service is served at
 * once; a removed one stops being routed, its queued requests get 503, its sessions end and its instances
 * are deleted. A changed one keeps its live sessions: annotations apply from now on (an idle timeout to
 * the current idle time, an expiry to new sessions only), and when the container changed (command, args,
 * env, working dir) the instances serving no session are replaced while bound ones serve their sessions
 * to the end on the old spec and take no new session (`retired`). Called by gateway.ts.
 */
import type { Logger } from '../common/log.ts';
import type { InstancePool } from './instance-pool.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { Scheduler } from './scheduler.ts';
import type { ServiceConfig } from './services/service-config.ts';
import type { SessionTable } from './session-table.ts';
import { newServiceState, type ServiceState } from './state.ts';

/** What a reload did, by service name. */
export interface ReloadResult {
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
}

/** The parts of the core a reload changes. */
export interface ReloadDeps {
  /** The core's live list (changed in place: the reconciler, metrics and admin API read it). */
  services: ServiceState[];
  domain: string;
  pool: InstancePool;
  table: SessionTable;
  scheduler: Scheduler;
  metrics: GatewayMetrics;
  log: Logger;
}

/**
 * Brings `deps.services` to `next` (already validated, names unique). A service whose namespace changed
 * has a new host: it is removed and added. The caller rebuilds its router and reconciles afterwards.
 */
export function applyServices(deps: ReloadDeps, next: readonly ServiceConfig[]): ReloadResult {
  const result: ReloadResult = { added: [], removed: [], changed: [], unchanged: [] };
  const byName = new Map(next.map((c) => [c.name, c]));
  for (const svc of [...deps.services]) {
    const cfg = byName.get(svc.config.name);
    if (cfg === undefined || cfg.namespace !== svc.config.namespace) {
      removeService(deps, svc);
      result.removed.push(svc.config.name);
    }
  }
  for (const cfg of next) {
    const svc = deps.services.find((s) => s.config.name === cfg.name);
    if (svc === undefined) {
      const added = newServiceState(cfg, deps.domain);
      added.metrics = deps.metrics.forService(cfg.name);
      deps.services.push(added);
      result.added.push(cfg.name);
    } else if (sameConfig(svc.config, cfg)) {
      svc.config = cfg; // only where it was read from may differ
      result.unchanged.push(cfg.name);
    } else {
      changeService(deps, svc, cfg);
      result.changed.push(cfg.name);
    }
  }
  deps.log.info(result, 'services reloaded');
  return result;
}

function removeService(deps: ReloadDeps, svc: ServiceState): void {
  deps.services.splice(deps.services.indexOf(svc), 1);
  deps.scheduler.rejectAll(svc, `service ${svc.config.name} was removed`);
  for (const s of [...svc.sessions.values()]) deps.table.end(s, 'service_removed');
  for (const inst of [...svc.instances.values()]) void deps.pool.delete(inst, 'service removed');
}

function changeService(deps: ReloadDeps, svc: ServiceState, cfg: ServiceConfig): void {
  const containerChanged = JSON.stringify(svc.config.container) !== JSON.stringify(cfg.container);
  svc.config = cfg;
  svc.crashes = 0; // a fixed command deserves a prompt first try
  svc.backoffUntil = 0;
  if (!containerChanged) return;
  for (const inst of [...svc.instances.values()]) {
    if (inst.sessions.size > 0) inst.retired = true;
    else if (inst.inflight === 0) void deps.pool.delete(inst, 'service changed');
    else inst.retired = true;
  }
}

/** Equal apart from where it was read (file and document). */
function sameConfig(a: ServiceConfig, b: ServiceConfig): boolean {
  return JSON.stringify({ ...a, source: null }) === JSON.stringify({ ...b, source: null });
}
