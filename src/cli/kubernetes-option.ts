/**
 * @module
 * Wires workload identity (`POST /v1/auth/kubernetes`) into `tether memory` from its flags.
 * Placeholder until the exchanger lands: no route is added yet.
 */
import type { Logger } from '../common/log.ts';
import type { StandaloneOptions } from '../server/standalone.ts';
import type { MemoryFlags } from './memory-command.ts';

/** Route plugins for workload identity. */
export function kubernetesPlugins(_flags: MemoryFlags, _log: Logger): NonNullable<StandaloneOptions['plugins']> {
  return [];
}
