/**
 * @module
 * In-memory `SessionStore` (the default, `--session-store memory`): bindings live as long as the gateway
 * process, so a restarted gateway starts empty (and deletes what the previous one left running). `bind` is
 * atomic because it runs without an await. Records are copied in and out so callers cannot mutate stored
 * state. Picked by the CLI / startGateway; tested by test/sessions/memory-store.test.ts via the conformance suite.
 */
import { type Clock, systemClock } from '../common/clock.ts';
import {
  type BindResult,
  type InstanceRecord,
  isExpired,
  type SessionBinding,
  type SessionPatch,
  type SessionRecord,
  type SessionStore,
} from './session-store.ts';

/** A `SessionStore` kept in Maps. */
export class MemorySessionStore implements SessionStore {
  readonly durable = false;
  readonly #records = new Map<string, SessionRecord>();
  readonly #instances = new Map<string, InstanceRecord>();
  /** Session slots of each instance (`service\0instance` -> slots). */
  readonly #bound = new Map<string, Set<string>>();
  readonly #clock: Clock;

  /** @param clock decides what is expired @default systemClock */
  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  async ready(): Promise<void> {}

  async bind(record: SessionRecord, target: number): Promise<BindResult> {
    const key = slot(record.service, record.id);
    const old = this.#live(key);
    if (old) return { outcome: 'exists', record: { ...old } };
    const inst = slot(record.service, record.instance);
    const bound = this.#bound.get(inst) ?? new Set<string>();
    for (const s of bound) if (!this.#live(s)) bound.delete(s);
    if (bound.size >= target) return { outcome: 'full' };
    bound.add(key);
    this.#bound.set(inst, bound);
    this.#records.set(key, { ...record });
    return { outcome: 'bound', record: { ...record } };
  }

  async get(service: string, id: string): Promise<SessionRecord | undefined> {
    const r = this.#live(slot(service, id));
    return r ? { ...r } : undefined;
  }

  async touch(service: string, id: string, patch: SessionPatch): Promise<void> {
    const r = this.#records.get(slot(service, id));
    if (!r) return;
    if (patch.state !== undefined) r.state = patch.state;
    if (patch.lastActive !== undefined) r.lastActive = patch.lastActive;
    if (patch.idleAt !== undefined) r.idleAt = patch.idleAt;
  }

  async end(service: string, id: string, only?: SessionBinding): Promise<boolean> {
    const key = slot(service, id);
    const r = this.#records.get(key);
    if (!r || (only && (r.instance !== only.instance || r.createdAt !== only.createdAt))) return false;
    this.#records.delete(key);
    this.#bound.get(slot(service, r.instance))?.delete(key);
    return true;
  }

  async list(service?: string): Promise<SessionRecord[]> {
    const now = this.#clock.now();
    const out: SessionRecord[] = [];
    for (const r of this.#records.values()) {
      if ((service === undefined || r.service === service) && !isExpired(r, now)) out.push({ ...r });
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async putInstance(record: InstanceRecord): Promise<void> {
    this.#instances.set(slot(record.service, record.name), { ...record });
  }

  async deleteInstance(service: string, name: string): Promise<void> {
    this.#instances.delete(slot(service, name));
    const bound = this.#bound.get(slot(service, name));
    if (bound?.size === 0) this.#bound.delete(slot(service, name));
  }

  async getInstance(service: string, name: string): Promise<InstanceRecord | undefined> {
    const r = this.#instances.get(slot(service, name));
    return r ? { ...r } : undefined;
  }

  async listInstances(service?: string): Promise<InstanceRecord[]> {
    const out = [...this.#instances.values()].filter((r) => service === undefined || r.service === service);
    return out.map((r) => ({ ...r })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async close(): Promise<void> {}

  /** The record under `key` unless it expired. */
  #live(key: string): SessionRecord | undefined {
    const r = this.#records.get(key);
    return r && !isExpired(r, this.#clock.now()) ? r : undefined;
  }
}

function slot(service: string, id: string): string {
  return `${service}\u0000${id}`;
}
