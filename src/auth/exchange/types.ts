/**
 * @module
 * The contract of a workload-token exchanger: what it proves about a caller and how it is configured.
 * Types only. Implemented by `kubernetes-exchanger.ts`; called by the memory server's
 * `POST /v1/auth/kubernetes` route, which mints the key.
 */

/** Who a workload token belongs to, after TokenReview and the owner chain. */
export interface WorkloadIdentity {
  /** The pod's namespace. */
  tenant: string;
  /** The SandboxClaim's name. */
  agent: string;
  /** The SandboxClaim's uid (keys minted for it are revoked when that claim is deleted). */
  claimUid: string;
  /** The pod's name. */
  session: string;
  podUid: string;
  /** The service account's name (without namespace). */
  serviceAccount: string;
  /** Epoch ms from the token's own `exp`; `null` when the token is not a JWT with `exp`. */
  tokenExpiresAt: number | null;
}

/** Turns a workload token into an identity. */
export interface WorkloadExchanger {
  /**
   * Prove who `token` belongs to.
   * @throws TetherError `warm_pool` (still in warm pool), `unauthenticated` (which check failed),
   *   `unavailable` with `retryAfter` (API server unreachable, slow, 5xx, or our RBAC missing)
   */
  exchange(token: string): Promise<WorkloadIdentity>;
}

/** Where to log operator problems (pino-compatible). */
export interface ExchangeLog {
  warn(obj: object, msg: string): void;
}

/** Options for `createKubernetesExchanger`. */
export interface KubernetesExchangerOptions {
  /** kubeconfig path. @default env `KUBECONFIG`, else in-cluster */
  kubeconfig?: string;
  /** The audience tokens must be minted for (the CLI defaults it to 'tether'). */
  audience: string;
  /** Only pods in these namespaces may exchange. @default any */
  allowedNamespaces?: string[];
  /** Only these service accounts, each 'ns/name' or 'name' (any namespace). @default any */
  allowedServiceAccounts?: string[];
  /** Timeout of every API-server call, ms, at most 10000. @default 5000 */
  requestTimeoutMs?: number;
  /** Do not verify the API server's certificate (tests only). @default false */
  skipTlsVerify?: boolean;
  /** Where operator problems (missing RBAC, API server down) are logged. @default none */
  log?: ExchangeLog;
}
