/**
 * @module
 * Leases over a `LeaseStore`: acquire (409 `lease_held` while another lease is live), renew and release
 * (409 `lease_lost` / `lease_not_held`), each at the clock's now. The store does the atomic part; this
 * adds the TTL range, the default holder and the wire errors. Used by the resume calls and `resume.ts`.
 */
import type { Clock } from '../../common/clock.ts';
import { invalidRequest } from '../../common/errors.ts';
import type { LeaseStore } from '../../store/lease-store.ts';
import type { LeaseRecord } from '../../store/resume-types.ts';
import { leaseHeld, refusalError } from './lease-errors.ts';

/** Shortest lease, ms. */
export const MIN_TTL_MS = 1000;
/** Longest lease, ms (one hour). */
export const MAX_TTL_MS = 3_600_000;
/** Lease life when none is asked for, ms. */
export const DEFAULT_TTL_MS = 60_000;

/**
 * `ttlMs` checked against the range, or the default.
 * @throws {TetherError} 400 naming `field` outside 1000..3600000
 */
export function leaseTtl(ttlMs: number | undefined, field = 'ttl_ms'): number {
  if (ttlMs === undefined) return DEFAULT_TTL_MS;
  if (!Number.isInteger(ttlMs) || ttlMs < MIN_TTL_MS || ttlMs > MAX_TTL_MS) {
    throw invalidRequest(field, `must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} (ms); got ${ttlMs}`);
  }
  return ttlMs;
}

/** Lease calls of one store at one clock's time. */
export class Leases {
  readonly #store: LeaseStore;
  readonly #clock: Clock;

  constructor(options: { store: LeaseStore; clock: Clock }) {
    this.#store = options.store;
    this.#clock = options.clock;
  }

  /**
   * Takes the namespace's lease.
   * @throws {TetherError} 409 `lease_held` (holder and until when) while a lease is live
   */
  async acquire(namespace: string, holder: string, ttlMs?: number): Promise<LeaseRecord> {
    const got = await this.#store.acquireLease({ namespace, holder, ttlMs: leaseTtl(ttlMs), now: this.#clock.now() });
    if (!got.acquired) throw leaseHeld(got.held);
    return got.lease;
  }

  /**
   * Extends the live lease of `epoch` by `ttlMs` from now, or by the TTL it was taken (or last renewed)
   * with when `ttlMs` is not given.
   * @throws {TetherError} 400 naming `ttl_ms` outside its range; 409 `lease_lost` / `lease_not_held`
   */
  async renew(namespace: string, epoch: number, ttlMs?: number): Promise<LeaseRecord> {
    const fence = { namespace, epoch, now: this.#clock.now() };
    const got = await this.#store.renewLease(fence, ttlMs === undefined ? undefined : leaseTtl(ttlMs));
    if (!got.ok) throw refusalError(got.reason === 'conflict' ? 'lost' : got.reason, fence, got.lease);
    return got.value;
  }

  /**
   * Ends the live lease of `epoch` now.
   * @throws {TetherError} 409 `lease_lost` / `lease_not_held`
   */
  async release(namespace: string, epoch: number): Promise<LeaseRecord> {
    const fence = { namespace, epoch, now: this.#clock.now() };
    const got = await this.#store.releaseLease(fence);
    if (!got.ok) throw refusalError(got.reason === 'conflict' ? 'lost' : got.reason, fence, got.lease);
    return got.value;
  }

  /** The namespace's latest lease, live or not (null when it never had one, or was purged). */
  latest(namespace: string): Promise<LeaseRecord | null> {
    return this.#store.getLease(namespace);
  }

  /** The namespace's lease if it is live now, else null. */
  async live(namespace: string): Promise<LeaseRecord | null> {
    const lease = await this.#store.getLease(namespace);
    return lease && lease.expiresAt > this.#clock.now() ? lease : null;
  }
}
