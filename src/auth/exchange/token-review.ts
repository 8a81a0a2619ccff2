/**
 * @module
 * Pure checks of a TokenReview `status` (authentication.k8s.io/v1): authenticated, audience echoed,
 * a service-account user bound to a pod, and the optional namespace / service-account allow-lists.
 * Does no I/O and never sees the token. Called by `kubernetes-exchanger.ts`.
 */
import { unauthenticated } from '../../common/errors.ts';
import type { TokenReviewStatus } from '../../kube/types.ts';

/** The extra naming the pod a token is bound to. */
export const POD_NAME_EXTRA = 'authentication.kubernetes.io/pod-name';
/** The extra carrying the uid of the pod a token is bound to. */
export const POD_UID_EXTRA = 'authentication.kubernetes.io/pod-uid';

const SA_PREFIX = 'system:serviceaccount:';

/** What a passed review says about the caller. */
export interface ReviewedToken {
  namespace: string;
  serviceAccount: string;
  podName: string;
  podUid: string;
}

/** What the review must satisfy. */
export interface ReviewPolicy {
  audience: string;
  allowedNamespaces?: readonly string[];
  /** Entries 'ns/name' or 'name'. */
  allowedServiceAccounts?: readonly string[];
}

/**
 * Check a TokenReview status against the policy.
 * @returns the namespace, service account and bound pod
 * @throws TetherError `unauthenticated` naming the check that failed
 * @example
 * const who = checkTokenReview(status, { audience: 'tether' }); // { namespace: 'agents', podName: ..., ... }
 */
export function checkTokenReview(status: TokenReviewStatus, policy: ReviewPolicy): ReviewedToken {
  if (status.authenticated !== true) throw unauthenticated('workload token was not authenticated by the API server');
  if (!Array.isArray(status.audiences) || !status.audiences.includes(policy.audience)) {
    throw unauthenticated(`the API server did not confirm the token's audience '${policy.audience}'`);
  }
  const username = status.user?.username ?? '';
  const parts = username.startsWith(SA_PREFIX) ? username.slice(SA_PREFIX.length).split(':') : [];
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    throw unauthenticated('workload token does not belong to a service account');
  }
  const [namespace, serviceAccount] = parts as [string, string];
  const podName = singleExtra(status, POD_NAME_EXTRA);
  const podUid = singleExtra(status, POD_UID_EXTRA);
  if (podName === null || podUid === null) {
    throw unauthenticated('workload token is not bound to a pod (no pod-name/pod-uid in the review)');
  }
  if (policy.allowedNamespaces && !policy.allowedNamespaces.includes(namespace)) {
    throw unauthenticated(`namespace '${namespace}' is not allowed to exchange tokens`);
  }
  if (
    policy.allowedServiceAccounts &&
    !serviceAccountAllowed(policy.allowedServiceAccounts, namespace, serviceAccount)
  ) {
    throw unauthenticated(`service account '${namespace}/${serviceAccount}' is not allowed to exchange tokens`);
  }
  return { namespace, serviceAccount, podName, podUid };
}

/** True when `ns/name` or bare `name` is on the list. */
export function serviceAccountAllowed(list: readonly string[], namespace: string, name: string): boolean {
  return list.some((entry) => (entry.includes('/') ? entry === `${namespace}/${name}` : entry === name));
}

/** The one non-empty string of an extra (an array on the wire; a bare string is tolerated). */
function singleExtra(status: TokenReviewStatus, key: string): string | null {
  const raw: unknown = status.user?.extra?.[key];
  const values = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  if (values.length !== 1 || typeof values[0] !== 'string' || values[0] === '') return null;
  return values[0];
}
