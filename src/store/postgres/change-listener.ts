/**
 * @module
 * The PostgreSQL store's change channel: one dedicated connection that LISTENs on `tether_changes`,
 * where writes that other replicas must know of (key revocations, registry versions, purges) NOTIFY in
 * their own transaction. When the connection drops (database restart, network), it reconnects with
 * back-off and then reports `resync`, since notifications sent meanwhile are lost: caches flush.
 */
import pg from 'pg';
import type { StoreChange } from '../store-lifecycle.ts';

/** The NOTIFY channel. */
export const CHANGES_CHANNEL = 'tether_changes';

/** Options for `ChangeListener`. */
export interface ChangeListenerOptions {
  config: pg.ClientConfig;
  onChange: (change: StoreChange) => void;
  /** Told (without secrets) when the connection drops or comes back. */
  onState?: (state: 'connected' | 'dropped', detail?: string) => void;
  /** First wait before reconnecting, ms; doubles up to `maxRetryMs`. @default 100 */
  retryMs?: number;
  /** @default 2000 */
  maxRetryMs?: number;
}

/** Parses a notification payload; null for one we do not know (a newer replica's). */
export function parseChange(payload: string | undefined): StoreChange | null {
  try {
    const c = JSON.parse(payload ?? '') as StoreChange;
    if (c.kind === 'key_revoked' && typeof c.id === 'string') return c;
    if (c.kind === 'registry' && typeof c.tenant === 'string') return c;
    if (c.kind === 'purged' && typeof c.namespace === 'string') return c;
  } catch {}
  return null;
}

/** Listens for changes until closed. */
export class ChangeListener {
  readonly #options: ChangeListenerOptions;
  #client: pg.Client | null = null;
  #closed = false;
  #attempts = 0;
  #retry: NodeJS.Timeout | null = null;
  #wait: number;

  constructor(options: ChangeListenerOptions) {
    this.#options = options;
    this.#wait = options.retryMs ?? 100;
  }

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.#client !== null;
  }

  /** Connects (retrying in the background on failure). */
  start(): Promise<void> {
    return this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    this.#attempts++;
    const client = new pg.Client(this.#options.config);
    let dropped = false;
    const drop = (err?: Error) => {
      if (dropped) return;
      dropped = true;
      if (this.#client === client) this.#client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (this.#closed) return;
      this.#options.onState?.('dropped', err?.message);
      this.#schedule();
    };
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (msg) => {
      if (msg.channel !== CHANGES_CHANNEL) return;
      const change = parseChange(msg.payload);
      if (change) this.#options.onChange(change);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (err) {
      drop(err as Error);
      return;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#wait = this.#options.retryMs ?? 100;
    this.#options.onState?.('connected');
    // Whatever was notified while no connection listened is lost: the caller flushes its caches.
    if (this.#attempts > 1) this.#options.onChange({ kind: 'resync' });
  }

  #schedule(): void {
    if (this.#closed || this.#retry) return;
    const wait = this.#wait;
    this.#wait = Math.min(wait * 2, this.#options.maxRetryMs ?? 2000);
    this.#retry = setTimeout(() => {
      this.#retry = null;
      void this.#connect();
    }, wait);
    this.#retry.unref();
  }

  /** Stops listening. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = null;
    const c = this.#client;
    this.#client = null;
    if (c) await c.end().catch(() => {});
  }
}

/** Notifies the other replicas of `change` when the transaction of `c` commits. */
export async function notifyChange(c: pg.PoolClient, change: StoreChange): Promise<void> {
  await c.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify(change)]);
}
