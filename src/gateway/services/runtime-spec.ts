/**
 * @module
 * Maps a validated Knative service (`ServiceConfig`) into the runtime's own `ServiceSpec`: the container's
 * fields as the manifest wrote them (command, args and workingDir unresolved: a pod resolves them in its
 * image), its first port, and the session timeout and idle policy as the service's idle rule. Pure. Called
 * where the Kubernetes runtime is given its services (at start and on each reload).
 */
import type { ProbeSpec, ResourceSpec, ServiceSpec } from '../../runtime/service-spec.ts';
import type { ServiceConfig } from './service-config.ts';

/** The runtime's spec of one service. */
export function runtimeServiceSpec(cfg: ServiceConfig): ServiceSpec {
  const raw = cfg.container.raw;
  const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? (v as string[]) : undefined);
  const mapping = <T>(v: unknown): T | undefined => (v && typeof v === 'object' ? (v as T) : undefined);
  const command = strings(raw.command);
  const args = strings(raw.args);
  const resources = mapping<ResourceSpec>(raw.resources);
  const readinessProbe = mapping<ProbeSpec>(raw.readinessProbe);
  return {
    name: cfg.name,
    configuration: cfg.configuration,
    revision: cfg.revision,
    container: {
      ...(typeof raw.name === 'string' && raw.name ? { name: raw.name } : {}),
      ...(cfg.container.image ? { image: cfg.container.image } : {}),
      ...(command ? { command } : {}),
      ...(args ? { args } : {}),
      ...(typeof raw.workingDir === 'string' ? { workingDir: raw.workingDir } : {}),
      env: cfg.container.env,
      ...(cfg.container.containerPort !== undefined ? { port: cfg.container.containerPort } : {}),
      ...(resources ? { resources } : {}),
      ...(readinessProbe ? { readinessProbe } : {}),
    },
    warmPool: cfg.warmPool,
    idle: { afterMs: cfg.sessionTimeoutMs, policy: cfg.idlePolicy },
  };
}

/** The runtime's specs of a set of services, in order. */
export function runtimeServiceSpecs(services: readonly ServiceConfig[]): ServiceSpec[] {
  return services.map(runtimeServiceSpec);
}
