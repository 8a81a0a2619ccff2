/**
 * @module
 * Start-up of a gateway over a session store that may hold a previous run's state: read this gateway's sessions
 * and instances from the store, adopt each recorded instance the runtime still runs (same pid and process start
 * time) in the state the runtime observes, restore the sessions bound to them with their original deadlines,
 * and clean up the rest — records whose instance is gone, and live instances nothing is bound to (no orphan
 * is left). Instances recorded for another gateway id are left alone. In memory mode the store is empty, so
 * every leftover is deleted — except on a runtime that `reapsLeftovers` (Kubernetes claims, found again by
 * their session's next request). Called once by gateway.ts before the gateway serves.
 */
import type { Logger } from '../common/log.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import type { InstanceRecord, SessionRecord, SessionStore } from '../sessions/session-store.ts';
import { type GatewayCore, instanceRecord } from './core.ts';
import type { InstanceEntry } from './state.ts';

/** What a rehydration did. */
export interface RehydrateResult {
  /** Instances taken back. */
  adopted: number;
  /** Sessions bound again to their instances. */
  restored: number;
  /** Session records ended because their instance was gone. */
  ended: number;
  /** Live instances deleted because nothing was bound to them. */
  deleted: number;
}

/** Options of `rehydrate`. */
export interface RehydrateOptions {
  store: SessionStore;
  runtime: InstanceRuntime;
  log: Logger;
  gatewayId: string;
}

/** Rebuilds the core's state from the store and the runtime. */
export async function rehydrate(core: GatewayCore, o: RehydrateOptions): Promise<RehydrateResult> {
  const services = new Map(core.services.map((s) => [s.config.name, s]));
  const [sessions, instances, found] = await Promise.all([o.store.list(), o.store.listInstances(), o.runtime.list()]);
  const records = new Map<string, InstanceRecord>(instances.map((i) => [i.name, i]));
  const mine = sessions.filter((r) => r.gateway === o.gatewayId);
  const bound = new Map<string, SessionRecord[]>();
  for (const r of mine) bound.set(r.instance, [...(bound.get(r.instance) ?? []), r]);
  const adopted = new Map<string, InstanceEntry>();
  const result: RehydrateResult = { adopted: 0, restored: 0, ended: 0, deleted: 0 };

  await Promise.all(
    found.map(async (f) => {
      const rec = records.get(f.name);
      if (rec !== undefined && rec.gateway !== o.gatewayId) return; // another gateway's, left for its restart
      const svc = services.get(f.service);
      const wanted = rec !== undefined && svc !== undefined && (rec.warm || bound.has(f.name));
      if (!wanted && o.runtime.reapsLeftovers) return; // the runtime's own policy keeps or reaps it
      const got = await o.runtime.adopt(wanted ? rec : f);
      if (got === undefined) return;
      if (!wanted || svc === undefined) {
        o.log.warn({ instance: f.name, pid: f.pid }, 'deleting a leftover instance of a previous gateway');
        await o.runtime.delete(f.name);
        result.deleted++;
        return;
      }
      adopted.set(f.name, core.pool.adopted(svc, got, rec.warm && !bound.has(f.name)));
      result.adopted++;
    }),
  );

  for (const r of mine) {
    const inst = adopted.get(r.instance);
    const svc = services.get(r.service);
    if (inst === undefined || svc === undefined) {
      await o.store.end(r.service, r.id);
      result.ended++;
      continue;
    }
    core.table.restore(svc, inst, r);
    result.restored++;
  }
  for (const rec of instances) {
    if (rec.gateway === o.gatewayId && !adopted.has(rec.name)) await o.store.deleteInstance(rec.service, rec.name);
  }
  // The store gets what the runtime observed (a pause may not have been recorded before a crash).
  await Promise.all([...adopted.values()].map((i) => o.store.putInstance(instanceRecord(i, o.gatewayId))));
  return result;
}
