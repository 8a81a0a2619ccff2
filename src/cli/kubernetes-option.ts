/**
 * @module
 * Wires workload identity (`POST /v1/auth/kubernetes`) into `tether memory` from its flags: checks them and
 * hands them to the server's plugin (server/workload-identity.ts). With no kubeconfig, no KUBECONFIG and no
 * cluster around, the route answers 503 saying so instead of stopping the server, so the embedded defaults
 * still start on a laptop; a kubeconfig that is given but cannot be used stops the server at start.
 */
import { parseDuration } from '../common/durations.ts';
import type { Logger } from '../common/log.ts';
import type { StandaloneOptions } from '../server/standalone.ts';
import { workloadIdentityPlugin } from '../server/workload-identity.ts';
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

/**
 * Route plugins for workload identity.
 * @throws {Error} for a bad `--kubernetes-key-ttl` or `--kubernetes-timeout`, or an unusable kubeconfig
 */
export function kubernetesPlugins(flags: KubernetesFlags, log: Logger): NonNullable<StandaloneOptions['plugins']> {
  if (!flags.kubernetes) return [];
  const keyTtlMs = parseDuration(flags.kubernetesKeyTtl);
  if (!(keyTtlMs >= 1000)) throw new Error(`--kubernetes-key-ttl must be at least 1s: got ${flags.kubernetesKeyTtl}`);
  const timeoutMs = parseDuration(flags.kubernetesTimeout);
  if (!(timeoutMs >= 1 && timeoutMs <= 10_000)) {
    throw new Error(`--kubernetes-timeout must be between 1ms and 10s: got ${flags.kubernetesTimeout}`);
  }
  return [
    workloadIdentityPlugin({
      // Configured: a bad kubeconfig is an error at start, not a silent 503 later.
      configured: Boolean(flags.kubeconfig || process.env.KUBECONFIG || process.env.KUBERNETES_SERVICE_HOST),
      kubeconfig: flags.kubeconfig,
      audience: flags.audience,
      keyTtlMs,
      requestTimeoutMs: Math.round(timeoutMs),
      allowedNamespaces: list(flags.allowedNamespaces),
      allowedServiceAccounts: list(flags.allowedServiceAccounts),
      log,
    }),
  ];
}
