/**
 * @module
 * What an operator may end on demand through the admin API: `DELETE /_tether/sessions/{id}` ends a session as
 * an idle delete would (its instance is deleted once it serves no other session; the key's next request is a
 * new session on a new instance, with the same agent name, so its memory follows), and `DELETE
 * /_tether/instances/{name}` deletes an instance and ends every session on it. Only this gateway's own sessions
 * and instances: one another gateway bound (shared Redis) is refused, naming that gateway. Called by
 * admin-server.ts.
 */
import { forbidden, invalidRequest, notFound } from '../common/errors.ts';
import type { SessionStore } from '../sessions/session-store.ts';
import type { InstancePool } from './instance-pool.ts';
import type { SessionTable } from './session-table.ts';
import type { ServiceState, SessionEntry } from './state.ts';

/** What the admin actions act on. */
export interface AdminActionDeps {
  services: readonly ServiceState[];
  table: SessionTable;
  pool: InstancePool;
  store: SessionStore;
}

/** A session id as the list shows it (its first 12 characters) or whole: base64url. */
export const SESSION_ID = /^[A-Za-z0-9_-]{12,43}$/;
/** An instance name: `<service>-<5 alphanumerics>`, or a name the runtime adopted. */
export const INSTANCE_NAME = /^[a-z0-9-]{1,63}$/;

/** The answer of an ended session. */
export interface EndedSession {
  id: string;
  service: string;
  instance: string;
  /** True when its instance serves no other session now, so it is being deleted. */
  instance_deleted: boolean;
}

/**
 * Ends the session whose id starts with `id` (ids of two services can be equal: `service` then picks one).
 * @throws {TetherError} 400 naming `service` when the id names sessions of several services, 403 for a
 *   session another gateway bound, 404 when there is none
 */
export async function endSession(d: AdminActionDeps, id: string, service: string | null): Promise<EndedSession> {
  const found: SessionEntry[] = [];
  for (const svc of d.services) {
    if (service !== null && svc.config.name !== service) continue;
    for (const s of svc.sessions.values()) if (s.id.startsWith(id)) found.push(s);
  }
  if (found.length > 1) {
    const names = [...new Set(found.map((s) => s.instance.service.config.name))];
    if (names.length > 1) {
      throw invalidRequest('service', `session ${id} is in services ${names.join(', ')}: add ?service=<name>`);
    }
    throw invalidRequest('id', `${id} starts more than one session id: give more of it`);
  }
  const s = found[0];
  if (s === undefined) {
    const elsewhere = (await d.store.list(service ?? undefined)).find((r) => r.id.startsWith(id));
    if (elsewhere !== undefined && elsewhere.gateway !== d.table.gatewayId) {
      throw forbidden(`session ${id} is bound by gateway ${elsewhere.gateway}: end it there`);
    }
    throw notFound(`session ${id}${service === null ? '' : ` of service ${service}`}`);
  }
  const inst = s.instance;
  d.table.end(s, 'admin');
  return {
    id: s.id.slice(0, 12),
    service: inst.service.config.name,
    instance: inst.name,
    instance_deleted: inst.sessions.size === 0,
  };
}

/** The answer of a deleted instance. */
export interface DeletedInstance {
  name: string;
  service: string;
  /** Ids (12 characters, as the list shows them) of the sessions it ended. */
  ended_sessions: string[];
}

/**
 * Deletes instance `name` of this gateway and ends its sessions; resolves once the runtime deleted it.
 * @throws {TetherError} 404 when this gateway has no such instance (or it is already being deleted)
 */
export async function deleteInstance(d: AdminActionDeps, name: string): Promise<DeletedInstance> {
  const inst = d.pool.get(name);
  if (inst === undefined || inst.state === 'stopping') throw notFound(`instance ${name}`);
  const sessions = [...inst.sessions];
  // Stopping first: the sessions' ends below then leave the delete to this call, which can be awaited.
  const deleted = d.pool.delete(inst, 'deleted by admin');
  for (const s of sessions) d.table.end(s, 'admin');
  await deleted;
  return { name, service: inst.service.config.name, ended_sessions: sessions.map((s) => s.id.slice(0, 12)) };
}
