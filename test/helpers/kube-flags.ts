/**
 * @module
 * `tether memory` flags for workload identity against a kubeconfig (the API double's), so tests and
 * benches wire the exchange route exactly as the CLI does.
 */
import type { MemoryFlags } from '../../src/cli/memory-command.ts';

/** Flags with workload identity on, pointing at `kubeconfig`. */
export function kubeFlags(kubeconfig: string, overrides: Partial<MemoryFlags> = {}): MemoryFlags {
  return {
    host: '127.0.0.1',
    port: '0',
    data: '',
    registry: 'personal',
    keyCacheTtl: '30s',
    kubernetes: true,
    kubeconfig,
    audience: 'tether',
    kubernetesKeyTtl: '15m',
    kubernetesTimeout: '2s',
    ...overrides,
  };
}
