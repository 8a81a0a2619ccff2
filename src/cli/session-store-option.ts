/**
 * @module
 * `--session-store memory|redis` and its Redis flags for `tether gateway`: checks them before anything
 * starts (a bad `--redis-url` exits non-zero naming host and port, never the password) and builds the store.
 * The CLI is the only place the session store driver is chosen.
 */
import { hostname } from 'node:os';
import type { Logger } from '../common/log.ts';
import { MemorySessionStore } from '../sessions/memory-store.ts';
import { RedisSessionStore } from '../sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../sessions/redis/redis-url.ts';
import type { SessionStore } from '../sessions/session-store.ts';

/** The flags, as commander gives them. */
export interface SessionStoreFlags {
  sessionStore: string;
  redisUrl?: string;
  redisPrefix: string;
  gatewayId?: string;
  port: string;
}

/**
 * Builds the session store the flags ask for (Redis connects in the background, retrying with back-off).
 * @throws {Error} for an unknown kind, a missing or bad `--redis-url`, or a bad `--redis-prefix`
 */
export function sessionStoreFromFlags(flags: SessionStoreFlags, log: Logger): SessionStore {
  if (flags.sessionStore === 'memory') return new MemorySessionStore();
  if (flags.sessionStore !== 'redis') {
    throw new Error(`--session-store: must be 'memory' or 'redis', got '${flags.sessionStore.slice(0, 40)}'`);
  }
  const url = flags.redisUrl ?? process.env.TETHER_REDIS_URL;
  if (!url)
    throw new Error('--session-store redis needs --redis-url redis://[user:pass@]host:port/db (or TETHER_REDIS_URL)');
  const target = parseRedisUrl(url);
  if (!/^[\w.:-]{1,64}$/.test(flags.redisPrefix)) {
    throw new Error(`--redis-prefix: 1-64 of [A-Za-z0-9_.:-], got '${flags.redisPrefix.slice(0, 70)}'`);
  }
  return new RedisSessionStore({ target, prefix: flags.redisPrefix, log });
}

/** This gateway's id in the store: `--gateway-id`, else `<hostname>-<port>` (stable across restarts). */
export function gatewayIdFromFlags(flags: SessionStoreFlags): string {
  const id = flags.gatewayId ?? `${hostname()}-${flags.port}`;
  if (!/^[\w.:-]{1,100}$/.test(id))
    throw new Error(`--gateway-id: 1-100 of [A-Za-z0-9_.:-], got '${id.slice(0, 110)}'`);
  return id;
}
