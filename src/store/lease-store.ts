/**
 * @module
 * The leases port of a `Store` (`store.ts`): one writer at a time per namespace, fenced by a
 * store-wide epoch that only grows. Used by `memory/resume/leases.ts`; the fenced writes the lease
 * guards are `ResumeStore.writeResume` (`resume-store.ts`). Records and refusals: `resume-types.ts`.
 */
import type { Fence, Fenced, LeaseAcquire, LeaseRecord } from './resume-types.ts';

/** Leases on namespaces. All methods are safe to call concurrently (atomic across replicas). */
export interface LeaseStore {
  /**
   * Takes the namespace's lease for `holder` unless a lease is live (`expiresAt > now`), whoever holds
   * it: then nothing changes and the live lease is returned. A new lease gets the next store-wide epoch.
   * Atomic: of any number of concurrent acquires at most one succeeds while the lease is live.
   * @param request.ttlMs life of the lease, ms (> 0)
   * @param request.now epoch ms
   */
  acquireLease(request: { namespace: string; holder: string; ttlMs: number; now: number }): Promise<LeaseAcquire>;
  /**
   * Extends the live lease of `fence.epoch` to `fence.now + ttlMs` (same epoch) and keeps `ttlMs` as
   * its TTL; with no `ttlMs`, by the TTL the lease has. `lost` when that epoch is not the namespace's
   * live lease, `not_held` when the namespace has no lease.
   */
  renewLease(fence: Fence, ttlMs?: number): Promise<Fenced<LeaseRecord>>;
  /** Ends the live lease of `fence.epoch` (its `expiresAt` becomes `fence.now`); refusals as `renewLease`. */
  releaseLease(fence: Fence): Promise<Fenced<LeaseRecord>>;
  /** The namespace's lease as stored (live or lapsed), or null when it never had one (or was purged). */
  getLease(namespace: string): Promise<LeaseRecord | null>;
}
