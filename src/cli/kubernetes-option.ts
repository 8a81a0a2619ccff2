/**
 * @module
 * Wires workload identity (`POST /v1/auth/kubernetes`) into `tether memory` from its flags. With no
 * kubeconfig, no KUBECONFIG and no cluster around, the route answers 503 saying so instead of
 * stopping the server, so the embedded defaults still start on a laptop.
 */
import { createKubernetesExchanger } from '../auth/exchange/kubernetes-exchanger.ts';
import type { WorkloadExchanger } from '../auth/exchange/types.ts';
import { RateLimiter } from '../auth/rate-limiter.ts';
import { parseDuration } from '../common/durations.ts';
import { unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { kubernetesAuthRoutes } from '../server/routes/auth-kubernetes.ts';
import type { StandaloneOptions } from '../server/standalone.ts';
import type { MemoryFlags } from './memory-command.ts';

function list(text: string | undefined): string[] | undefined {
  const items = text
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items && items.length > 0 ? items : undefined;
}

/** Route plugins for workload identity. */
export function kubernetesPlugins(flags: MemoryFlags, log: Logger): NonNullable<StandaloneOptions['plugins']> {
  if (!flags.kubernetes) return [];
  const keyTtlMs = parseDuration(flags.kubernetesKeyTtl);
  if (!(keyTtlMs >= 1000)) throw new Error(`--kubernetes-key-ttl must be at least 1s: got ${flags.kubernetesKeyTtl}`);
  let exchanger: WorkloadExchanger;
  try {
    exchanger = createKubernetesExchanger({
      kubeconfig: flags.kubeconfig,
      audience: flags.audience,
      allowedNamespaces: list(flags.allowedNamespaces),
      allowedServiceAccounts: list(flags.allowedServiceAccounts),
      requestTimeoutMs: Math.min(parseDuration(flags.kubernetesTimeout), 10_000),
      log: log.child({ component: 'kubernetes-exchange' }),
    });
    log.info({ audience: flags.audience, keyTtlMs }, 'workload identity on: POST /v1/auth/kubernetes');
  } catch (err) {
    const reason = (err as Error).message;
    log.info({ reason }, 'workload identity off: no Kubernetes API server configured');
    exchanger = {
      exchange: async () => {
        throw unavailable(`workload identity is not configured on this server: ${reason}`, 60);
      },
    };
  }
  return [
    async (app, { metrics, keys, clock }) =>
      kubernetesAuthRoutes(app, {
        exchanger,
        keys,
        clock,
        metrics,
        keyTtlMs,
        perPod: new RateLimiter({ perMinute: 60, clock }),
        perAddress: new RateLimiter({ perMinute: 1200, clock }),
      }),
  ];
}
