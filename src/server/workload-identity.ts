/**
 * @module
 * Workload identity on the memory server (`POST /v1/auth/kubernetes`): the exchanger, the claim revoker and
 * the route, as one server plugin. With no Kubernetes API server configured the route answers 503 saying so,
 * so a laptop without a cluster still starts. Flags are read by the CLI (cli/kubernetes-option.ts); `tether
 * up` (up/platform.ts) points it at its local identity authority.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ClaimRevoker } from '../auth/claim-revocation.ts';
import { createKubernetesExchanger } from '../auth/exchange/kubernetes-exchanger.ts';
import type { WorkloadExchanger } from '../auth/exchange/types.ts';
import { RateLimiter } from '../auth/rate-limiter.ts';
import { unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { createObjectClient } from '../kube/object-client.ts';
import { kubernetesAuthRoutes } from './routes/auth-kubernetes.ts';
import type { StandaloneOptions } from './standalone.ts';

/** Options of `workloadIdentityPlugin`, already checked. */
export interface WorkloadIdentityOptions {
  /**
   * A Kubernetes API server is configured (a kubeconfig, KUBECONFIG, or in a cluster): a kubeconfig that
   * cannot be used is an error at start. False: the route answers 503.
   */
  configured: boolean;
  /** The kubeconfig file; KUBECONFIG, else in-cluster, when absent. */
  kubeconfig?: string;
  /** Audience the workload token must carry. */
  audience: string;
  /** Life of an exchanged key, ms (>= 1000). */
  keyTtlMs: number;
  /** Timeout of each call to the API server, ms (1..10000). */
  requestTimeoutMs: number;
  allowedNamespaces?: string[];
  allowedServiceAccounts?: string[];
  log: Logger;
}

/** The route plugin for workload identity. */
export function workloadIdentityPlugin(o: WorkloadIdentityOptions): NonNullable<StandaloneOptions['plugins']>[number] {
  const { log, keyTtlMs } = o;
  let exchanger: WorkloadExchanger;
  let kubeconfig: KubeConfig | undefined;
  if (o.configured) {
    exchanger = createKubernetesExchanger({
      kubeconfig: o.kubeconfig,
      audience: o.audience,
      allowedNamespaces: o.allowedNamespaces,
      allowedServiceAccounts: o.allowedServiceAccounts,
      requestTimeoutMs: o.requestTimeoutMs,
      log: log.child({ component: 'kubernetes-exchange' }),
    });
    kubeconfig = loadKubeConfig({ kubeconfig: o.kubeconfig });
    log.info({ audience: o.audience, keyTtlMs }, 'workload identity on: POST /v1/auth/kubernetes');
  } else {
    log.info('workload identity off: no --kubeconfig, no KUBECONFIG and not in a cluster');
    exchanger = {
      exchange: async () => {
        throw unavailable('workload identity is not configured on this server (no Kubernetes API server)', 60);
      },
    };
  }
  return async (app, { metrics, keys, clock }) => {
    // Keys end with their claim: watch claims where workload keys live, and where new ones are minted.
    const revoker = kubeconfig
      ? new ClaimRevoker({
          kubeconfig,
          client: createObjectClient(kubeconfig, o.requestTimeoutMs),
          keys,
          clock,
          log: log.child({ component: 'claim-revocation' }),
        })
      : undefined;
    if (revoker) {
      app.addHook('onClose', async () => revoker.close());
      await revoker.start();
    }
    await kubernetesAuthRoutes(app, {
      exchanger,
      keys,
      clock,
      metrics,
      keyTtlMs,
      perPod: new RateLimiter({ perMinute: 60, clock }),
      perAddress: new RateLimiter({ perMinute: 1200, clock }),
      beforeMint: revoker ? (id) => void revoker.watch(id.tenant) : undefined,
    });
  };
}
