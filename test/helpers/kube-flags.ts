/**
 * @module
 * `tether memory` flags for workload identity against a kubeconfig (the API double's), so tests and
 * benches wire the exchange route exactly as the CLI does.
 */
import type { KubernetesFlags } from '../../src/cli/kubernetes-option.ts';

/**
 * Flags with workload identity on, pointing at `kubeconfig`. The API-call timeout is the longest allowed (10 s):
 * the double answers at once, so a call is late only on a loaded machine; a test of the timeout sets its own.
 */
export function kubeFlags(kubeconfig: string, overrides: Partial<KubernetesFlags> = {}): KubernetesFlags {
  return {
    kubernetes: true,
    kubeconfig,
    audience: 'tether',
    kubernetesKeyTtl: '15m',
    kubernetesTimeout: '10s',
    ...overrides,
  };
}
