/**
 * @module
 * Writes this gateway's live state back into a session store that lost it (Redis restarted without persistence,
 * or flushed; the store notices: sessions/redis/data-marker.ts): every confirmed session it bound, with its
 * deadlines, by the store's atomic bind, and every instance it manages, as the runtime observes it — so a later
 * crash of the gateway loses nothing. Every write is issued in one synchronous pass, so an end or a state change
 * made after it reaches the store after it. Sessions of other gateways are theirs to write. Called by gateway.ts.
 */
import type { Logger } from '../common/log.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import { type GatewayCore, instanceRecord } from './core.ts';
import { toRecord } from './session-table.ts';

/** What a write-back did. */
export interface WriteBackResult {
  /** Sessions bound again (those the store still held are not counted). */
  sessions: number;
  instances: number;
  /** Sessions the store holds another binding for now (bound meanwhile elsewhere): that binding is kept. */
  conflicts: number;
}

/** Options of `writeBack`. */
export interface WriteBackOptions {
  store: SessionStore;
  gatewayId: string;
  log: Logger;
}

/**
 * Writes every live session and instance of `core` to the store.
 * @throws when the store fails (the caller's store tries again at its next check)
 */
export async function writeBack(core: GatewayCore, o: WriteBackOptions): Promise<WriteBackResult> {
  const instances: Promise<void>[] = [];
  const binds: Promise<'bound' | 'kept' | 'conflict'>[] = [];
  for (const svc of core.services) {
    for (const inst of svc.instances.values()) {
      if (inst.foreign || inst.state === 'starting' || inst.state === 'stopping') continue;
      instances.push(o.store.putInstance(instanceRecord(inst, o.gatewayId)));
    }
    for (const s of svc.sessions.values()) {
      if (!s.live || !s.confirmed || s.gateway !== o.gatewayId) continue;
      const record = toRecord(svc, s);
      binds.push(
        o.store.bind(record, svc.config.target).then((r) => {
          if (r.outcome === 'bound') return 'bound';
          const same =
            r.outcome === 'exists' && r.record.gateway === o.gatewayId && r.record.instance === record.instance;
          return same ? 'kept' : 'conflict';
        }),
      );
    }
  }
  const [, bound] = await Promise.all([Promise.all(instances), Promise.all(binds)]);
  const result = {
    sessions: bound.filter((b) => b === 'bound').length,
    instances: instances.length,
    conflicts: bound.filter((b) => b === 'conflict').length,
  };
  o.log.info(result, 'live sessions written back to the session store');
  return result;
}
