/**
 * @module
 * Identifiers: time-ordered event ids and random hex. Imports only node:crypto.
 */
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let counter = 0;

/**
 * A new event id, `ev_<12 hex ms><6 hex counter><8 hex random>`: sorts by creation time,
 * strictly increasing within one process (the counter breaks ties inside a millisecond).
 * @param nowMs epoch milliseconds to stamp; defaults to `Date.now()`
 */
export function newEventId(nowMs = Date.now()): string {
  if (nowMs <= lastMs) {
    counter += 1;
  } else {
    lastMs = nowMs;
    counter = 0;
  }
  const ms = lastMs.toString(16).padStart(12, '0');
  const seq = counter.toString(16).padStart(6, '0');
  return `ev_${ms}${seq}${randomHex(4)}`;
}

// Random bytes for event ids come from a pool refilled 4 KiB at a time: one randomBytes() call per id
// was a syscall per write and showed in write profiles.
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolAt = POOL_SIZE;

/** `bytes` random bytes as lower-case hex. */
export function randomHex(bytes: number): string {
  if (bytes > 64) return randomBytes(bytes).toString('hex');
  if (poolAt + bytes > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolAt = 0;
  }
  const hex = pool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

const ALPHANUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `n` random characters of `[a-z0-9]`, e.g. for instance names. */
export function randomAlphanumeric(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHANUM[(bytes[i] as number) % ALPHANUM.length];
  return out;
}
