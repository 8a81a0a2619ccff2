/**
 * @module
 * A session key's hash, for places that must find a session without holding its key (the label of its
 * Kubernetes SandboxClaim): 32 hex of sha256. Pure; used by the scheduler and the Kubernetes runtime.
 */
import { createHash } from 'node:crypto';

/** 32 hex of sha256 of the session key (128 bits; fits a Kubernetes label value). */
export function sessionKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}
