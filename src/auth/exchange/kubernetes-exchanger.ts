/**
 * @module
 * The Kubernetes workload-token exchanger: TokenReview, then the owner chain Pod -> Sandbox ->
 * SandboxClaim, giving tenant = namespace, agent = claim name, session = pod name. It does not mint
 * keys or rate-limit; the memory server's `POST /v1/auth/kubernetes` route calls `exchange()` and does.
 */
import { TetherError, unavailable } from '../../common/errors.ts';
import { createKubeClient, type KubeClient, MAX_REQUEST_TIMEOUT_MS } from '../../kube/client.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import { type ChainState, evaluateOwnerChain } from './owner-chain.ts';
import { tokenExpiresAt } from './token-expiry.ts';
import { checkTokenReview } from './token-review.ts';
import type { ExchangeLog, KubernetesExchangerOptions, WorkloadExchanger, WorkloadIdentity } from './types.ts';

export type { KubernetesExchangerOptions, WorkloadExchanger, WorkloadIdentity } from './types.ts';

/** Seconds a client is told to wait when the API server is down or slow. */
const RETRY_AFTER_S = 2;
/** Seconds a client is told to wait when our RBAC or credentials are wrong (an operator must act). */
const RETRY_AFTER_MISCONFIGURED_S = 30;

/**
 * Make the exchanger. Options are checked here, once; the kubeconfig is loaded here too.
 * @throws Error when an option is invalid or no kubeconfig can be loaded
 * @example
 * const exchanger = createKubernetesExchanger({ audience: 'tether', kubeconfig: double.kubeconfigPath });
 * const who = await exchanger.exchange(token); // { tenant: 'agents', agent: 'run-1', session: 'tether-agents-x7k2q', ... }
 */
export function createKubernetesExchanger(options: KubernetesExchangerOptions): WorkloadExchanger {
  checkOptions(options);
  const kube = createKubeClient({
    kubeconfig: options.kubeconfig,
    requestTimeoutMs: options.requestTimeoutMs,
    skipTlsVerify: options.skipTlsVerify,
  });
  return createExchangerWithClient(kube, options);
}

/**
 * The exchanger over any `KubeClient` (the factory above uses the real one).
 * @throws TetherError from `exchange()`: `warm_pool`, `unauthenticated`, `unavailable`
 */
export function createExchangerWithClient(kube: KubeClient, options: KubernetesExchangerOptions): WorkloadExchanger {
  const policy = {
    audience: options.audience,
    allowedNamespaces: options.allowedNamespaces ? [...options.allowedNamespaces] : undefined,
    allowedServiceAccounts: options.allowedServiceAccounts ? [...options.allowedServiceAccounts] : undefined,
  };
  const log = options.log;

  return {
    async exchange(raw: string): Promise<WorkloadIdentity> {
      // A token read from a file may end with a newline.
      const token = typeof raw === 'string' ? raw.trim() : '';
      if (token.length === 0) throw new TetherError('unauthenticated', 'no workload token');
      try {
        const status = await kube.reviewToken(token, [policy.audience]);
        const reviewed = checkTokenReview(status, policy);
        const state: ChainState = { namespace: reviewed.namespace, podName: reviewed.podName, podUid: reviewed.podUid };
        for (;;) {
          const step = evaluateOwnerChain(state);
          if (step.kind === 'refused') throw new TetherError(step.code, step.reason);
          if (step.kind === 'claimed') {
            return {
              tenant: reviewed.namespace,
              agent: step.claimName,
              claimUid: step.claimUid,
              session: reviewed.podName,
              podUid: reviewed.podUid,
              serviceAccount: reviewed.serviceAccount,
              tokenExpiresAt: tokenExpiresAt(token),
            };
          }
          state[step.slot] =
            step.slot === 'pod'
              ? await kube.getPod(step.namespace, step.name)
              : await kube.getObject(step.type, step.namespace, step.name);
        }
      } catch (err) {
        if (err instanceof TetherError) throw err;
        throw toUnavailable(err, log);
      }
    },
  };
}

/** Any failure to talk to the API server becomes 503 `unavailable`; our own misconfiguration is logged. */
function toUnavailable(err: unknown, log: ExchangeLog | undefined): TetherError {
  if (!(err instanceof KubeRequestError)) {
    log?.warn({ err }, 'workload token exchange failed unexpectedly');
    return unavailable('workload identity check failed; try again', RETRY_AFTER_S);
  }
  switch (err.failure) {
    case 'forbidden':
      log?.warn(
        { what: err.what, status: err.status },
        'the API server refused a call (403): grant the memory server RBAC to create tokenreviews and get pods, sandboxes, sandboxclaims',
      );
      return unavailable(
        `the memory server may not ${err.what.split(' ').slice(0, 2).join(' ')} (RBAC); an operator must fix its role`,
        RETRY_AFTER_MISCONFIGURED_S,
      );
    case 'unauthorized':
      log?.warn({ what: err.what }, 'the API server refused the memory server credentials (401)');
      return unavailable('the API server refused the memory server credentials', RETRY_AFTER_MISCONFIGURED_S);
    case 'timeout':
      log?.warn({ what: err.what }, 'the API server did not answer in time');
      return unavailable('the Kubernetes API server did not answer in time', RETRY_AFTER_S);
    case 'server_error':
      log?.warn({ what: err.what, status: err.status }, 'the API server answered with an error');
      return unavailable(`the Kubernetes API server answered ${err.status}`, err.retryAfter ?? RETRY_AFTER_S);
    case 'unreachable':
      log?.warn({ what: err.what, err: err.cause }, 'the API server is unreachable');
      return unavailable('the Kubernetes API server is unreachable', RETRY_AFTER_S);
    default:
      log?.warn({ what: err.what, status: err.status }, 'the API server gave an unexpected answer');
      return unavailable('the Kubernetes API server gave an unexpected answer', RETRY_AFTER_S);
  }
}

function checkOptions(options: KubernetesExchangerOptions): void {
  if (typeof options.audience !== 'string' || options.audience.trim() === '') {
    throw new Error(
      `Cannot create the Kubernetes exchanger as 'audience' must be a non-empty string: got ${JSON.stringify(options.audience)}`,
    );
  }
  const t = options.requestTimeoutMs;
  if (t !== undefined && (!Number.isInteger(t) || t < 1 || t > MAX_REQUEST_TIMEOUT_MS)) {
    throw new Error(
      `Cannot create the Kubernetes exchanger as 'requestTimeoutMs' must be an integer in 1..${MAX_REQUEST_TIMEOUT_MS}: got ${t}`,
    );
  }
  for (const [name, list] of [
    ['allowedNamespaces', options.allowedNamespaces],
    ['allowedServiceAccounts', options.allowedServiceAccounts],
  ] as const) {
    if (list !== undefined && (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v === ''))) {
      throw new Error(`Cannot create the Kubernetes exchanger as '${name}' must be a list of non-empty strings`);
    }
  }
}
