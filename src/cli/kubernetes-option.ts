/**
 * @module
 * Wires workload identity (`POST /v1/auth/kubernetes`) into `tether memory` from its flags. With no
 * kubeconfig, no KUBECONFIG and no cluster around, the route answers 503 saying so instead of
 * stopping the server, so the embedded defaults still start on a laptop; a kubeconfig that is given
 * but cannot be used stops the server at start.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { ClaimRevoker } from '../auth/claim-revocation.ts';
import { createKubernetesExchanger } from '../auth/exchange/kubernetes-exchanger.ts';
import type { WorkloadExchanger } from '../auth/exchange/types.ts';
import { RateLimiter } from '../auth/rate-limiter.ts';
import { parseDuration } from '../common/durations.ts';
import { unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { createObjectClient } from '../kube/object-client.ts';
import { kubernetesAuthRoutes } from '../server/routes/auth-kubernetes.ts';
import type { StandaloneOptions } from '../server/standalone.ts';
import type { MemoryFlags } from './memory-command.ts';

/** The `tether memory` flags workload identity reads. */
export type KubernetesFlags = Pick<
  MemoryFlags,
  | 'kubernetes'
  | 'kubeconfig'
  | 'audience'
  | 'kubernetesKeyTtl'
  | 'kubernetesTimeout'
  | 'allowedNamespaces'
  | 'allowedServiceAccounts'
>;

function list(text: string | undefined): string[] | undefined {
  const items = text
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items && items.length > 0 ? items : undefined;
}

/** Route plugins for workload identity. */
export function kubernetesPlugins(flags: KubernetesFlags, log: Logger): NonNullable<StandaloneOptions['plugins']> {
  if (!flags.kubernetes) return [];
  const keyTtlMs = parseDuration(flags.kubernetesKeyTtl);
  if (!(keyTtlMs >= 1000)) throw new Error(`--kubernetes-key-ttl must be at least 1s: got ${flags.kubernetesKeyTtl}`);
  const timeoutMs = parseDuration(flags.kubernetesTimeout);
  if (!(timeoutMs >= 1 && timeoutMs <= 10_000)) {
    throw new Error(`--kubernetes-timeout must be between 1ms and 10s: got ${flags.kubernetesTimeout}`);
  }
  const options = {
    kubeconfig: flags.kubeconfig,
    audience: flags.audience,
    allowedNamespaces: list(flags.allowedNamespaces),
    allowedServiceAccounts: list(flags.allowedServiceAccounts),
    requestTimeoutMs: Math.round(timeoutMs),
    log: log.child({ component: 'kubernetes-exchange' }),
  };
  let exchanger: WorkloadExchanger;
  let kubeconfig: KubeConfig | undefined;
  if (flags.kubeconfig || process.env.KUBECONFIG || process.env.KUBERNETES_SERVICE_HOST) {
    // Configured: a bad kubeconfig is an error at start, not a silent 503 later.
    exchanger = createKubernetesExchanger(options);
    kubeconfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
    log.info({ audience: flags.audience, keyTtlMs }, 'workload identity on: POST /v1/auth/kubernetes');
  } else {
    log.info('workload identity off: no --kubeconfig, no KUBECONFIG and not in a cluster');
    exchanger = {
      exchange: async () => {
        throw unavailable('workload identity is not configured on this server (no Kubernetes API server)', 60);
      },
    };
  }
  return [
    async (app, { metrics, keys, clock }) => {
      // Keys end with their claim: watch claims where workload keys live, and where new ones are minted.
      const revoker = kubeconfig
        ? new ClaimRevoker({
            kubeconfig,
            client: createObjectClient(kubeconfig, Math.round(timeoutMs)),
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
    },
  ];
}
