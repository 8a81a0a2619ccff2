/**
 * @module
 * The isolation side of a container spec: `resources.limits` (memory, cpu, and `tether.dev/pids`) and
 * the `tether.dev/read-only-paths` / `tether.dev/public-egress` annotations, validated into
 * `SandboxOptions`. Problems name the field; parse-service.ts turns them into a ManifestError.
 */
import { resolve } from 'node:path';
import { parseQuantity } from '../../common/quantities.ts';
import type { ResourceLimits, SandboxOptions } from '../../runtime/runtime.ts';
import { ANNOTATIONS, PIDS_LIMIT } from './service-config.ts';

const TEMPLATE_ANN = 'spec.template.metadata.annotations';

/** Smallest memory limit accepted: below it not even a Node.js process starts. */
export const MIN_MEMORY_BYTES = 16 * 2 ** 20;

/**
 * Parses the sandbox options of one container.
 * @param container the container object; @param ann the merged annotations
 * @param manifestDir the folder relative paths are resolved against
 * @param fail reports a problem (`resources.limits.memory`-style names are container-relative)
 */
export function parseSandbox(
  container: Record<string, unknown>,
  ann: Record<string, string>,
  manifestDir: string,
  fail: (field: string, problem: string) => never,
): SandboxOptions {
  const limits: ResourceLimits = {};
  const resources = container.resources;
  if (resources !== undefined) {
    if (resources === null || typeof resources !== 'object') fail('resources', 'must be a mapping');
    const raw = (resources as Record<string, unknown>).limits;
    if (raw !== undefined) {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('resources.limits', 'must be a mapping');
      const l = raw as Record<string, unknown>;
      const quantity = (key: string): number | undefined => {
        const v = l[key];
        if (v === undefined) return undefined;
        if (typeof v !== 'string' && typeof v !== 'number') fail(`resources.limits.${key}`, 'must be a quantity');
        try {
          return parseQuantity(String(v));
        } catch (err) {
          return fail(`resources.limits.${key}`, (err as Error).message);
        }
      };
      const memory = quantity('memory');
      if (memory !== undefined) {
        if (memory < MIN_MEMORY_BYTES)
          fail('resources.limits.memory', `must be at least 16Mi, got ${String(l.memory)}`);
        limits.memoryBytes = Math.floor(memory);
      }
      const cpu = quantity('cpu');
      if (cpu !== undefined) {
        if (cpu < 0.001) fail('resources.limits.cpu', `must be at least 1m, got ${String(l.cpu)}`);
        limits.cpuMillicores = Math.round(cpu * 1000);
      }
      const pids = quantity(PIDS_LIMIT);
      if (pids !== undefined) {
        if (!Number.isInteger(pids) || pids < 1) fail(`resources.limits.${PIDS_LIMIT}`, 'must be a positive integer');
        limits.pids = pids;
      }
    }
  }
  const paths = ann[ANNOTATIONS.readOnlyPaths];
  const readOnlyPaths = (paths ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => resolve(manifestDir, p));
  const egress = ann[ANNOTATIONS.publicEgress] ?? 'false';
  if (egress !== 'true' && egress !== 'false') {
    fail(`${TEMPLATE_ANN}["${ANNOTATIONS.publicEgress}"]`, `must be "true" or "false", got ${JSON.stringify(egress)}`);
  }
  return { readOnlyPaths, limits, publicEgress: egress === 'true' };
}
