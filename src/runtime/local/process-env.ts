/**
 * @module
 * The environment of a local instance: a small base taken from the gateway (PATH, HOME, locale, TMPDIR —
 * never the gateway's own secrets), then the container `env`, then the Knative variables and `PORT`.
 * Pure; used by local-runtime.ts.
 */
import type { InstanceSpec } from '../runtime.ts';

/** Gateway variables an instance inherits, like the environment baked into an image. */
export const INHERITED_ENV = Object.freeze(['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER', 'SHELL']);

/**
 * Builds the environment of one instance.
 * @param spec the instance spec
 * @param port the port the instance must listen on (`PORT`)
 * @param parent the gateway's environment @default process.env
 */
export function instanceEnv(
  spec: InstanceSpec,
  port: number,
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of INHERITED_ENV) {
    const v = parent[k];
    if (v !== undefined) env[k] = v;
  }
  Object.assign(env, spec.env);
  env.PORT = String(port);
  env.K_SERVICE = spec.service;
  env.K_CONFIGURATION = spec.configuration;
  env.K_REVISION = spec.revision;
  env.TETHER_INSTANCE = spec.name;
  return env;
}
