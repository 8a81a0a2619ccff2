/**
 * @module
 * Session and instance records <-> Redis hash fields (all strings; null as ''). Pure; used by redis-store.ts.
 */
import type { InstanceRecord, SessionRecord, SessionState } from '../session-store.ts';

/** The hash fields of a session record, as a flat field, value list. */
export function sessionFields(r: SessionRecord): string[] {
  return [
    'id',
    r.id,
    'service',
    r.service,
    'instance',
    r.instance,
    'claim',
    r.claim,
    'state',
    r.state,
    'createdAt',
    String(r.createdAt),
    'lastActive',
    String(r.lastActive),
    'idleAt',
    r.idleAt === null ? '' : String(r.idleAt),
    'expiresAt',
    r.expiresAt === null ? '' : String(r.expiresAt),
    'gateway',
    r.gateway,
  ];
}

/** Field, value pairs of a `touch` patch. */
export function patchFields(p: { state?: SessionState; lastActive?: number; idleAt?: number | null }): string[] {
  const out: string[] = [];
  if (p.state !== undefined) out.push('state', p.state);
  if (p.lastActive !== undefined) out.push('lastActive', String(p.lastActive));
  if (p.idleAt !== undefined) out.push('idleAt', p.idleAt === null ? '' : String(p.idleAt));
  return out;
}

/** A session record from HGETALL (an object) or a flat field, value list; undefined when empty. */
export function toSession(h: Record<string, string> | string[]): SessionRecord | undefined {
  const o = Array.isArray(h) ? pairs(h) : h;
  if (!o.id) return undefined;
  return {
    id: o.id,
    service: o.service ?? '',
    instance: o.instance ?? '',
    claim: o.claim ?? '',
    state: (o.state ?? 'idle') as SessionState,
    createdAt: Number(o.createdAt),
    lastActive: Number(o.lastActive),
    idleAt: nullable(o.idleAt),
    expiresAt: nullable(o.expiresAt),
    gateway: o.gateway ?? '',
  };
}

/** The hash fields of an instance record. */
export function instanceFields(r: InstanceRecord): string[] {
  return [
    'name',
    r.name,
    'service',
    r.service,
    'state',
    r.state,
    'pid',
    r.pid === null ? '' : String(r.pid),
    'incarnation',
    r.incarnation ?? '',
    'host',
    r.host,
    'port',
    String(r.port),
    'warm',
    r.warm ? '1' : '0',
    'gateway',
    r.gateway,
  ];
}

/** An instance record from HGETALL; undefined when empty. */
export function toInstance(o: Record<string, string>): InstanceRecord | undefined {
  if (!o.name) return undefined;
  return {
    name: o.name,
    service: o.service ?? '',
    state: o.state === 'paused' ? 'paused' : 'running',
    pid: nullable(o.pid),
    incarnation: o.incarnation ? o.incarnation : null,
    host: o.host ?? '127.0.0.1',
    port: Number(o.port),
    warm: o.warm === '1',
    gateway: o.gateway ?? '',
  };
}

function nullable(v: string | undefined): number | null {
  return v === undefined || v === '' ? null : Number(v);
}

function pairs(list: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) o[list[i] as string] = list[i + 1] as string;
  return o;
}
