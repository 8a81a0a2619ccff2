/**
 * @module
 * `tether gateway --runtime kubernetes`: loads the services for Kubernetes (an image is required, a command
 * is not), makes the `KubernetesRuntime` from `--kubeconfig` (or KUBECONFIG, or in-cluster) and
 * `--namespace`, and hands the gateway its services with no warm pool of its own (the SandboxWarmPool is it).
 * Called by the driver table (drivers.ts `pickRuntime`).
 */

import type { Clock } from '../common/clock.ts';
import { parseDuration } from '../common/durations.ts';
import type { Logger } from '../common/log.ts';
import { loadServices } from '../gateway/services/load-services.ts';
import { runtimeServiceSpecs } from '../gateway/services/runtime-spec.ts';
import type { ServiceConfig } from '../gateway/services/service-config.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { createObjectClient } from '../kube/object-client.ts';
import { KubernetesRuntime } from '../runtime/kubernetes/kubernetes-runtime.ts';

/** The gateway flags the Kubernetes runtime reads. */
export interface KubernetesRuntimeFlags {
  services: string;
  kubeconfig?: string;
  namespace: string;
  memoryUrl?: string;
  audience: string;
  sandboxServiceAccount: string;
  memoryNamespace: string;
  kubernetesTimeout: string;
}

/** The runtime and the services as the gateway core must see them. */
export interface KubernetesSetup {
  runtime: KubernetesRuntime;
  services: ServiceConfig[];
  /** Reads the manifests again (SIGHUP): the runtime gets them whole, the core without its own warm pool. */
  reloadServices: () => Promise<ServiceConfig[]>;
}

/**
 * Builds the Kubernetes runtime from flags.
 * @throws Error for a bad flag, an unusable kubeconfig, or a manifest error (ManifestError)
 */
export async function kubernetesRuntime(
  flags: KubernetesRuntimeFlags,
  log: Logger,
  clock: Clock,
): Promise<KubernetesSetup> {
  const timeoutMs = parseDuration(flags.kubernetesTimeout);
  if (!(timeoutMs >= 1 && timeoutMs <= 10_000)) {
    throw new Error(`--kubernetes-timeout must be between 1ms and 10s: got ${flags.kubernetesTimeout}`);
  }
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(flags.namespace)) {
    throw new Error(`--namespace must be a DNS label: got '${flags.namespace}'`);
  }
  const services = await loadServices(flags.services, { runtime: 'kubernetes' });
  const kubeconfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const runtime = new KubernetesRuntime({
    kubeconfig,
    client: createObjectClient(kubeconfig, Math.round(timeoutMs)),
    namespace: flags.namespace,
    services: runtimeServiceSpecs(services),
    memoryUrl: flags.memoryUrl,
    audience: flags.audience,
    serviceAccount: flags.sandboxServiceAccount,
    memoryNamespace: flags.memoryNamespace,
    log: log.child({ component: 'kubernetes-runtime' }),
    clock,
  });
  log.info(
    { namespace: flags.namespace, services: services.map((s) => s.name) },
    'runtime: kubernetes (agent-sandbox)',
  );
  // The gateway keeps no warm pool of its own: the SandboxWarmPool is it.
  const forCore = (list: ServiceConfig[]) => list.map((s) => ({ ...s, warmPool: 0 }));
  return {
    runtime,
    services: forCore(services),
    reloadServices: async () => {
      const next = await loadServices(flags.services, { runtime: 'kubernetes' });
      runtime.setServices(runtimeServiceSpecs(next));
      return forCore(next);
    },
  };
}
