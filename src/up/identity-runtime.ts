/**
 * @module
 * Gives the instances of a local runtime a workload identity, as a kubelet would on a cluster: each
 * new instance is registered with the local authority (pod + sandbox in its service's warm pool),
 * gets a token file (re-issued before it expires) and `TETHER_URL` / `TETHER_TOKEN_FILE`; when the
 * instance ends, its pod goes and its token stops passing review. Wraps any `InstanceRuntime`.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalIdentityAuthority } from '../auth/local-authority/authority.ts';
import type { Logger } from '../common/log.ts';
import type { InstanceRuntime, InstanceSpec, StartedInstance } from '../runtime/runtime.ts';

/** Options for `withWorkloadIdentity`. */
export interface IdentityRuntimeOptions {
  authority: LocalIdentityAuthority;
  /** Knative namespace of each service (the tenant). */
  namespaceOf: (service: string) => string;
  /** Folder for per-instance token files (created, mode 0700). */
  tokenDir: string;
  /** The memory server URL given to instances. */
  memoryUrl: string;
  /** Token audience. @default 'tether' */
  audience?: string;
  /** Token life in seconds; re-issued at half of it. @default 3600 */
  tokenTtlSeconds?: number;
  log: Logger;
}

/** Wraps `runtime` so every instance it starts has a workload token. */
export function withWorkloadIdentity(runtime: InstanceRuntime, o: IdentityRuntimeOptions): InstanceRuntime {
  const audience = o.audience ?? 'tether';
  const ttl = o.tokenTtlSeconds ?? 3600;
  mkdirSync(o.tokenDir, { recursive: true, mode: 0o700 });
  const live = new Map<string, { namespace: string; file: string }>();

  const writeToken = async (name: string): Promise<void> => {
    const inst = live.get(name);
    if (!inst) return;
    const token = await o.authority.issueToken(inst.namespace, name, audience, ttl);
    // Write then rename, as the kubelet does: a reader never sees half a token.
    writeFileSync(`${inst.file}.tmp`, token, { mode: 0o600 });
    renameSync(`${inst.file}.tmp`, inst.file);
  };
  // Like the kubelet, rotate tokens well before they expire.
  const rotate = setInterval(
    () => {
      for (const name of live.keys()) {
        writeToken(name).catch((err: unknown) =>
          o.log.warn({ instance: name, err: (err as Error).message }, 'token rotation failed'),
        );
      }
    },
    (ttl * 1000) / 2,
  );
  rotate.unref();

  const forget = (name: string): void => {
    const inst = live.get(name);
    if (!inst) return;
    live.delete(name);
    o.authority.removeInstance(inst.namespace, name);
    rmSync(join(o.tokenDir, name), { recursive: true, force: true });
  };
  runtime.onExit((name) => forget(name));

  return {
    async start(spec: InstanceSpec): Promise<StartedInstance> {
      const namespace = o.namespaceOf(spec.service);
      const dir = join(o.tokenDir, spec.name);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, 'token');
      o.authority.addInstance(namespace, spec.name, spec.service);
      live.set(spec.name, { namespace, file });
      await writeToken(spec.name);
      try {
        return await runtime.start({
          ...spec,
          tokenFile: file,
          env: { ...spec.env, TETHER_URL: o.memoryUrl, TETHER_TOKEN_FILE: file, TETHER_AUDIENCE: audience },
        });
      } catch (err) {
        forget(spec.name);
        throw err;
      }
    },
    list: () => runtime.list(),
    async adopt(identity) {
      const found = await runtime.adopt(identity);
      if (found === undefined) return undefined;
      // The adopted process reads the same token file as before: register its pod again and renew the token.
      const namespace = o.namespaceOf(found.service);
      const dir = join(o.tokenDir, found.name);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      o.authority.addInstance(namespace, found.name, found.service);
      live.set(found.name, { namespace, file: join(dir, 'token') });
      await writeToken(found.name);
      return found;
    },
    pause: (name) => runtime.pause(name),
    resume: (name) => runtime.resume(name),
    async delete(name) {
      await runtime.delete(name);
      forget(name);
    },
    logs: (name) => runtime.logs(name),
    onExit: (listener) => runtime.onExit(listener),
    async close() {
      clearInterval(rotate);
      await runtime.close();
      for (const name of [...live.keys()]) forget(name);
    },
    async detach() {
      clearInterval(rotate);
      await runtime.detach();
    },
  };
}
