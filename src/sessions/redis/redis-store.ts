/**
 * @module
 * The Redis `SessionStore` (`--session-store redis`), on ioredis (well kept, Lua scripts with EVALSHA and
 * automatic reconnection). Every key starts with `prefix` (`tether:` by default), so deployments sharing one
 * Redis never see each other's data. Multi-key changes are the Lua scripts beside this file. Sessions are
 * stored under a hash of their key, never the key. Redis down: `bind` and reads fail at once with 503
 * `unavailable` (the gateway keeps routing bound sessions from its own view), other writes are queued in order
 * (write-queue.ts) and flushed when the connection is back; ioredis reconnects with back-off by itself. Redis
 * alive but silent (SIGSTOP, a hung host): every command has a deadline (`commandTimeoutMs`); the first one
 * missed counts as down and drops the connection, so later calls fail at once until a new one is ready; a bind
 * that got no answer is undone when Redis answers again (it may have been made). Redis back but empty
 * (restarted without persistence, flushed): a marker key tells (data-marker.ts), and `onDataLost` writes back.
 * Standalone Redis only (the scripts build member keys, which Redis Cluster does not allow).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { unavailable } from '../../common/errors.ts';
import type { Logger } from '../../common/log.ts';
import {
  type BindResult,
  type InstanceRecord,
  isExpired,
  type SessionBinding,
  type SessionPatch,
  type SessionRecord,
  type SessionStore,
} from '../session-store.ts';
import { instanceFields, patchFields, sessionFields, toInstance, toSession } from './codec.ts';
import { DataMarker } from './data-marker.ts';
import type { RedisTarget } from './redis-url.ts';
import { WriteQueue } from './write-queue.ts';

/** Options of `RedisSessionStore`. */
export interface RedisStoreOptions {
  target: RedisTarget;
  /** Start of every key. @default 'tether:' */
  prefix?: string;
  log: Logger;
  /** Epoch ms (the gateway's clock): what counts as expired. @default Date.now */
  now?: () => number;
  /** Longest wait between reconnection attempts (ms). @default 2000 */
  maxBackoffMs?: number;
  /** Deadline of every Redis command (ms): past it the call fails with 503 and Redis counts as down. @default 2000 */
  commandTimeoutMs?: number;
  /** How often the data marker is read (ms), besides at every new connection. @default 1000 */
  markerCheckMs?: number;
}

const script = (name: string) => readFileSync(join(import.meta.dirname, name), 'utf8');
const BIND = script('bind-session.lua');
const END = script('end-session.lua');
const TOUCH = script('touch-session.lua');

type Scripted = Redis & {
  bindSession(...args: Array<string | number>): Promise<string[]>;
  endSession(...args: Array<string | number>): Promise<number>;
  touchSession(...args: Array<string | number>): Promise<number>;
};

/** Sessions and instances in Redis. */
export class RedisSessionStore implements SessionStore {
  readonly durable = true;
  readonly #redis: Scripted;
  readonly #p: string;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #queue = new WriteQueue();
  readonly #ready: Promise<void>;
  #closed: Promise<void> | undefined;
  #down = false;
  readonly #marker: DataMarker;
  readonly #markerTimer: NodeJS.Timeout;

  constructor(o: RedisStoreOptions) {
    this.#p = o.prefix ?? 'tether:';
    if (!/^[\w.:-]{1,64}$/.test(this.#p)) {
      throw new Error(`Cannot use Redis as 'prefix' must be 1-64 of [A-Za-z0-9_.:-]: got '${this.#p}'`);
    }
    this.#log = o.log.child({ component: 'redis', redis: o.target.display, prefix: this.#p });
    this.#now = o.now ?? Date.now;
    const maxBackoff = o.maxBackoffMs ?? 2000;
    const commandTimeout = o.commandTimeoutMs ?? 2000;
    if (!(commandTimeout > 0)) {
      throw new Error(`Cannot use Redis as 'commandTimeoutMs' must be > 0: got ${commandTimeout}`);
    }
    const t = o.target;
    const redis = new Redis({
      host: t.host,
      port: t.port,
      db: t.db,
      username: t.username,
      password: t.password,
      tls: t.tls ? {} : undefined,
      lazyConnect: true,
      // Fail at once while disconnected: a new session must get its 503 now, not after the outage.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      // A connected but silent Redis (SIGSTOP) accepts connections and never answers: every command, the
      // connection's own handshake included, fails after this long instead of waiting for the outage to end.
      commandTimeout,
      // A dropped connection's socket is destroyed after this long when the silent peer never closes its side.
      disconnectTimeout: 500,
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), maxBackoff),
    });
    redis.defineCommand('bindSession', { numberOfKeys: 4, lua: BIND });
    redis.defineCommand('endSession', { numberOfKeys: 2, lua: END });
    redis.defineCommand('touchSession', { numberOfKeys: 1, lua: TOUCH });
    this.#redis = redis as Scripted;
    redis.on('error', (err: Error) => {
      if (!this.#down) this.#log.warn({ err: err.message }, 'session store unreachable, reconnecting');
      this.#down = true;
    });
    this.#marker = new DataMarker(
      {
        get: (key) => this.#call(() => redis.get(key)),
        setIfAbsent: async (key, value) => (await this.#call(() => redis.set(key, value, 'NX'))) === 'OK',
      },
      `${this.#p}marker`,
      this.#log,
    );
    const checkMarker = () => {
      if (!this.#down && redis.status === 'ready') {
        this.#marker.check().catch((err: unknown) => {
          this.#log.debug({ err: (err as Error).message }, 'session store marker not read');
        });
      }
    };
    this.#markerTimer = setInterval(checkMarker, o.markerCheckMs ?? 1000);
    this.#markerTimer.unref();
    redis.on('ready', () => {
      if (this.#down) this.#log.info({ queued: this.#queue.size }, 'session store reachable again');
      this.#down = false;
      void this.#queue
        .flush()
        .then((n) => {
          if (n > 0) this.#log.info({ writes: n }, 'queued session store writes written back');
        })
        .finally(checkMarker);
    });
    // The first connection is retried by the strategy above; connect() itself rejects on the first failure.
    this.#ready = new Promise<void>((resolve, reject) => {
      redis.once('ready', resolve);
      redis.once('end', () => reject(new Error('session store closed')));
    });
    this.#ready.catch(() => {});
    redis.connect().catch(() => {});
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  onDataLost(restore: () => Promise<void>): void {
    this.#marker.onLost(restore);
  }

  async bind(record: SessionRecord, target: number): Promise<BindResult> {
    const key = this.#sessionKey(record.service, record.id);
    const r = await this.#call(() =>
      this.#redis.bindSession(
        key,
        this.#boundKey(record.service, record.instance),
        this.#indexKey(record.service),
        `${this.#p}services`,
        this.#now(),
        target,
        record.id,
        record.service,
        record.createdAt,
        record.expiresAt ?? '',
        `${this.#p}s:${record.service}:`,
        ...sessionFields(record),
      ),
    ).catch((err: unknown) => {
      // Sent but not answered: Redis may still make it when it answers again, for a reservation the gateway
      // has taken back. Undo exactly that binding then (the same instance and createdAt), nothing made since.
      if ((err as Error).cause !== undefined) {
        const index = this.#indexKey(record.service);
        const bound = `${this.#p}b:${record.service}:`;
        this.#queue.put(key, () =>
          this.#redis.endSession(key, index, record.id, bound, record.instance, record.createdAt),
        );
      }
      throw err;
    });
    if (r[0] === 'bound') return { outcome: 'bound', record: { ...record } };
    if (r[0] === 'full') return { outcome: 'full' };
    return { outcome: 'exists', record: toSession(r.slice(1)) as SessionRecord };
  }

  async get(service: string, id: string): Promise<SessionRecord | undefined> {
    const h = await this.#call(() => this.#redis.hgetall(this.#sessionKey(service, id)));
    const r = toSession(h);
    return r && !isExpired(r, this.#now()) ? r : undefined;
  }

  touch(service: string, id: string, patch: SessionPatch): Promise<void> {
    const fields = patchFields(patch);
    if (fields.length === 0) return Promise.resolve();
    const key = this.#sessionKey(service, id);
    return this.#write(key, () => this.#redis.touchSession(key, ...fields));
  }

  async end(service: string, id: string, only?: SessionBinding): Promise<boolean> {
    const key = this.#sessionKey(service, id);
    const guard = only ? [only.instance, only.createdAt] : [];
    const write = () => this.#redis.endSession(key, this.#indexKey(service), id, `${this.#p}b:${service}:`, ...guard);
    if (this.#down || this.#queue.has(key)) {
      this.#queue.put(key, write);
      return true;
    }
    try {
      return (await write()) === 1;
    } catch (err) {
      this.#queue.put(key, write);
      this.#silent(err);
      this.#logQueued(err);
      return true;
    }
  }

  async list(service?: string): Promise<SessionRecord[]> {
    const services = service === undefined ? await this.#services() : [service];
    const now = this.#now();
    const out: SessionRecord[] = [];
    for (const svc of services) {
      const ids = await this.#call(() => this.#redis.zrange(this.#indexKey(svc), 0, -1));
      const pipe = this.#redis.pipeline();
      for (const id of ids) pipe.hgetall(this.#sessionKey(svc, id));
      const rows = ids.length === 0 ? [] : ((await this.#call(() => pipe.exec())) ?? []);
      const gone: string[] = [];
      rows.forEach(([err, h], i) => {
        const r = err ? undefined : toSession(h as Record<string, string>);
        if (r === undefined) gone.push(ids[i] as string);
        else if (!isExpired(r, now)) out.push(r);
      });
      // Index entries of records Redis expired by itself (PEXPIREAT).
      if (gone.length > 0) await this.#redis.zrem(this.#indexKey(svc), ...gone).catch(() => {});
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  putInstance(record: InstanceRecord): Promise<void> {
    const key = this.#instanceKey(record.service, record.name);
    return this.#write(key, () =>
      this.#redis
        .multi()
        .del(key)
        .hset(key, ...instanceFields(record))
        .sadd(`${this.#p}is:${record.service}`, record.name)
        .sadd(`${this.#p}services`, record.service)
        .exec(),
    );
  }

  deleteInstance(service: string, name: string): Promise<void> {
    const key = this.#instanceKey(service, name);
    return this.#write(key, () =>
      this.#redis.multi().del(key).del(this.#boundKey(service, name)).srem(`${this.#p}is:${service}`, name).exec(),
    );
  }

  async getInstance(service: string, name: string): Promise<InstanceRecord | undefined> {
    return toInstance(await this.#call(() => this.#redis.hgetall(this.#instanceKey(service, name))));
  }

  async listInstances(service?: string): Promise<InstanceRecord[]> {
    const services = service === undefined ? await this.#services() : [service];
    const out: InstanceRecord[] = [];
    for (const svc of services) {
      const names = await this.#call(() => this.#redis.smembers(`${this.#p}is:${svc}`));
      if (names.length === 0) continue;
      const pipe = this.#redis.pipeline();
      for (const n of names) pipe.hgetall(this.#instanceKey(svc, n));
      for (const [err, h] of (await this.#call(() => pipe.exec())) ?? []) {
        const r = err ? undefined : toInstance(h as Record<string, string>);
        if (r) out.push(r);
      }
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The data marker this store saw last (data-marker.ts); undefined before its first look. Tests read it. */
  get dataMarker(): string | null | undefined {
    return this.#marker.seen;
  }

  /** Writes still queued (Redis was down); the tests and the admin API read it. */
  get queuedWrites(): number {
    return this.#queue.size;
  }

  close(): Promise<void> {
    this.#closed ??= (async () => {
      clearInterval(this.#markerTimer);
      if (this.#queue.size > 0 && !this.#down) await this.#queue.flush();
      if (this.#queue.size > 0) this.#log.warn({ writes: this.#queue.size }, 'session store closed with writes queued');
      try {
        await this.#redis.quit();
      } catch {
        this.#redis.disconnect();
      }
    })();
    return this.#closed;
  }

  async #services(): Promise<string[]> {
    return (await this.#call(() => this.#redis.smembers(`${this.#p}services`))).sort();
  }

  /** Runs a read or a bind: fails with 503 at once while Redis is unreachable (or silent). */
  async #call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#down || this.#redis.status !== 'ready') throw storeDown();
    try {
      return await fn();
    } catch (err) {
      if (isConnectionError(err)) {
        this.#silent(err);
        throw storeDown(err);
      }
      throw err;
    }
  }

  /**
   * A command got no answer within its deadline while the connection looked fine: Redis is frozen or cut off.
   * Counts as down at once and drops the connection (ioredis reconnects with back-off and the handshake has
   * the same deadline), so other calls fail at once instead of each waiting out its own deadline.
   */
  #silent(err: unknown): void {
    if (!/Command timed out/.test((err as Error)?.message ?? '') || this.#down) return;
    this.#down = true;
    this.#log.warn({ err: (err as Error).message }, 'session store not answering, reconnecting');
    this.#redis.disconnect(true);
  }

  /** Runs a write now, or queues it (in order, one per record) while Redis is unreachable. */
  async #write(record: string, write: () => Promise<unknown>): Promise<void> {
    if (this.#down || this.#redis.status !== 'ready' || this.#queue.has(record)) {
      this.#queue.put(record, write);
      return;
    }
    try {
      await write();
    } catch (err) {
      if (!isConnectionError(err)) throw err;
      this.#queue.put(record, write);
      this.#silent(err);
      this.#logQueued(err);
    }
  }

  #logQueued(err: unknown): void {
    this.#log.warn({ err: (err as Error).message, queued: this.#queue.size }, 'session store write queued');
  }

  #sessionKey(service: string, id: string): string {
    return `${this.#p}s:${service}:${id}`;
  }
  #boundKey(service: string, instance: string): string {
    return `${this.#p}b:${service}:${instance}`;
  }
  #indexKey(service: string): string {
    return `${this.#p}si:${service}`;
  }
  #instanceKey(service: string, name: string): string {
    return `${this.#p}i:${service}:${name}`;
  }
}

function storeDown(cause?: unknown) {
  const e = unavailable('the session store (Redis) is unreachable; retry shortly', 2);
  if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause });
  return e;
}

/** Errors of the connection (not of a command): the write may be replayed later. */
function isConnectionError(err: unknown): boolean {
  const m = (err as Error)?.message ?? '';
  return /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|max retries|enableOfflineQueue|Command timed out/i.test(
    m,
  );
}
