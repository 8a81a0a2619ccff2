/**
 * @module
 * In-memory `SessionStore` (the default, `--session-store memory`): bindings live as long as the
 * gateway process. Records are copied in and out so callers cannot mutate stored state.
 * Picked by the CLI / startGateway; tested by test/sessions/memory-store.test.ts via the conformance suite.
 */
import type { SessionRecord, SessionStore } from './session-store.ts';

/** A `SessionStore` kept in a Map. */
export class MemorySessionStore implements SessionStore {
  readonly #records = new Map<string, SessionRecord>();

  async get(service: string, key: string): Promise<SessionRecord | undefined> {
    const r = this.#records.get(slot(service, key));
    return r ? { ...r } : undefined;
  }

  async put(record: SessionRecord): Promise<void> {
    this.#records.set(slot(record.service, record.key), { ...record });
  }

  async update(
    service: string,
    key: string,
    patch: Partial<Pick<SessionRecord, 'state' | 'lastActive'>>,
  ): Promise<void> {
    const r = this.#records.get(slot(service, key));
    if (!r) return;
    if (patch.state !== undefined) r.state = patch.state;
    if (patch.lastActive !== undefined) r.lastActive = patch.lastActive;
  }

  async delete(service: string, key: string): Promise<boolean> {
    return this.#records.delete(slot(service, key));
  }

  async list(service?: string): Promise<SessionRecord[]> {
    const out: SessionRecord[] = [];
    for (const r of this.#records.values()) if (service === undefined || r.service === service) out.push({ ...r });
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async close(): Promise<void> {}
}

function slot(service: string, key: string): string {
  return `${service}\u0000${key}`;
}
