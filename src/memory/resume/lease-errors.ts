/**
 * @module
 * The lease errors a client sees (409): `lease_held` naming the holder and until when, `lease_lost`
 * for a stale or lapsed epoch, `lease_not_held` for a write without one. Used by `leases.ts` and
 * `records.ts`; the messages never carry a key.
 */
import { TetherError } from '../../common/errors.ts';
import type { FenceRefusal, LeaseRecord } from '../../store/resume-types.ts';

/** 409 `lease_held`: another acquire holds the live lease. */
export function leaseHeld(lease: LeaseRecord): TetherError {
  return new TetherError(
    'lease_held',
    `the lease of ${lease.namespace} is held by '${lease.holder}' (epoch ${lease.epoch}) until ` +
      `${new Date(lease.expiresAt).toISOString()}`,
  );
}

/** 409 `lease_not_held`: a resume write without an epoch, or for a namespace without a lease. */
export function leaseNotHeld(namespace: string): TetherError {
  return new TetherError(
    'lease_not_held',
    `writes to the resume records of ${namespace} need the lease: acquire it (POST /v1/lease/acquire or ` +
      'POST /v1/resume) and send its epoch in X-Lease-Epoch',
  );
}

/** 409 `lease_lost`: the epoch is no longer the live lease (a later one was issued, or it lapsed). */
export function leaseLost(epoch: number, lease: LeaseRecord | null, now: number): TetherError {
  const why =
    lease === null
      ? 'there is no lease'
      : lease.epoch !== epoch
        ? `epoch ${lease.epoch} was issued to '${lease.holder}' since`
        : `it lapsed or was released at ${new Date(Math.min(lease.expiresAt, now)).toISOString()}`;
  return new TetherError('lease_lost', `the lease of epoch ${epoch} is lost: ${why}; nothing was written`);
}

/** The error of a fenced call's refusal (`conflict` never reaches here: records retry it). */
export function refusalError(
  reason: Exclude<FenceRefusal, 'conflict'>,
  fence: { namespace: string; epoch: number; now: number },
  lease: LeaseRecord | null,
): TetherError {
  return reason === 'not_held' ? leaseNotHeld(fence.namespace) : leaseLost(fence.epoch, lease, fence.now);
}
