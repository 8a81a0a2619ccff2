/**
 * @module
 * The level-based resync of the Kubernetes runtime, run at start and every `resyncMs` (sooner after an
 * error): each service has its SandboxTemplate and SandboxWarmPool as `objects.ts` builds them (created, or
 * merge-patched when a field the gateway owns drifted: `owned-diff.ts`, so the CRD defaults the server filled
 * in never cause a write), objects of removed services are deleted, claim deletions that failed are retried,
 * and claims no instance owns (left by an earlier gateway, their session not back) follow the service's idle
 * policy: deleted (delete mode) or suspended (pause mode) after `session-timeout`. A pass over unchanged
 * manifests reads two lists and writes nothing; a field the server does not keep (an older CRD prunes it) is
 * patched once and logged, not every pass.
 */
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/log.ts';
import {
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../kube/agent-sandbox.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import type { ServiceSpec } from '../service-spec.ts';
import { LABELS, MANAGED_SELECTOR, type SandboxObjectOptions, templateFor, warmPoolFor } from './objects.ts';
import { observe } from './observed.ts';
import { ownedPatch, withLastApplied } from './owned-diff.ts';

/** Options of `ServiceSync`. */
export interface ServiceSyncOptions extends SandboxObjectOptions {
  client: ObjectClient;
  /** The services as they are now (a reload changes them). */
  services: () => readonly ServiceSpec[];
  log: Logger;
  clock: Clock;
  /** @default 30000 */
  resyncMs?: number;
  /** The managed claims as last seen (the runtime's informer). */
  claims: () => KubeResource[];
  /** True when an instance of this runtime owns the claim. */
  owned: (claim: string) => boolean;
  /** The Sandbox of that name as last seen (the runtime's informer). */
  sandbox: (name: string) => KubeResource | undefined;
}

/** Keeps the cluster's templates, pools and unowned claims where the services say. */
export class ServiceSync {
  readonly #o: ServiceSyncOptions;
  readonly #orphanSince = new Map<string, number>();
  readonly #suspended = new Set<string>();
  readonly #toDelete = new Map<string, string>(); // claim -> uid
  /** `<plural>/<name>` -> the wanted labels + spec (JSON) a patch did not make stick. */
  readonly #unkept = new Map<string, string>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #backoffMs = 1000;
  /** The pass running or last run: passes never overlap (two would both patch the same drift). */
  #chain: Promise<void> = Promise.resolve();
  #markFirst!: () => void;
  /** Resolves after the first pass that succeeded. */
  readonly firstPass = new Promise<void>((resolve) => {
    this.#markFirst = resolve;
  });

  constructor(options: ServiceSyncOptions) {
    this.#o = options;
  }

  start(): void {
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** Runs a pass soon (after a reload), instead of at the next interval. */
  soon(): void {
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  /** An instance took the claim over: not an orphan. */
  adopted(claim: string): void {
    this.#orphanSince.delete(claim);
    this.#suspended.delete(claim);
  }

  /** The claim is gone. */
  gone(claim: string): void {
    this.#toDelete.delete(claim);
    this.#orphanSince.delete(claim);
    this.#suspended.delete(claim);
  }

  /** Deletes the claim at the next pass too, in case the runtime's own delete failed. */
  deleteLater(claim: string, uid: string): void {
    this.#toDelete.set(claim, uid);
  }

  /** Runs one pass now, after the one running if any; rejects when it fails (the timer's passes go on). */
  passNow(): Promise<void> {
    const pass = this.#chain.then(() => this.#pass());
    this.#chain = pass.catch(() => {});
    return pass;
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.passNow();
      this.#markFirst();
      this.#backoffMs = 1000;
      this.#schedule(this.#o.resyncMs ?? 30_000);
    } catch (err) {
      this.#o.log.warn({ err: (err as Error).message }, 'Kubernetes resync failed; retrying');
      this.#schedule(this.#backoffMs);
      this.#backoffMs = Math.min(this.#backoffMs * 2, this.#o.resyncMs ?? 30_000);
    }
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => void this.#run(), ms);
    this.#timer.unref();
  }

  async #pass(): Promise<void> {
    const { client, namespace } = this.#o;
    const services = this.#o.services();
    const names = new Set(services.map((s) => s.name));
    // One list per kind instead of a get per object: a pass over N unchanged services is 2 reads, 0 writes.
    const [templates, pools] = await Promise.all(
      [SANDBOX_TEMPLATE, SANDBOX_WARM_POOL].map(async (type) => {
        const items = (await client.list(type, namespace, MANAGED_SELECTOR)).items;
        return new Map(items.map((o) => [o.metadata.name, o]));
      }),
    );
    for (const cfg of services) {
      await this.#upsert(SANDBOX_TEMPLATE, templateFor(cfg, this.#o), templates!);
      await this.#upsert(SANDBOX_WARM_POOL, warmPoolFor(cfg, this.#o), pools!);
    }
    const claims = this.#o.claims();
    for (const [type, objects] of [
      [SANDBOX_WARM_POOL, [...pools!.values()]],
      [SANDBOX_TEMPLATE, [...templates!.values()]],
      [SANDBOX_CLAIM, claims],
    ] as const) {
      for (const obj of objects) {
        const svc = obj.metadata.labels?.[LABELS.service];
        if (svc !== undefined && names.has(svc)) continue;
        this.#o.log.info(
          { kind: type.kind, name: obj.metadata.name, service: svc },
          'deleting object of a removed service',
        );
        await client.delete(type, namespace, obj.metadata.name);
      }
    }
    for (const [claim, uid] of this.#toDelete) {
      // Only the claim we meant: a same-name claim made since (the session came back) stays.
      const now = claims.find((c) => c.metadata.name === claim);
      if (!now) this.#toDelete.delete(claim);
      else if (now.metadata.uid === uid) await client.delete(SANDBOX_CLAIM, namespace, claim);
    }
    await this.#orphans();
  }

  /** Claims no instance owns: the service's idle policy applies from when this gateway first saw them. */
  async #orphans(): Promise<void> {
    const now = this.#o.clock.now();
    for (const claim of this.#o.claims()) {
      const name = claim.metadata.name;
      if (this.#o.owned(name) || claim.metadata.deletionTimestamp) continue;
      const cfg = this.#o.services().find((s) => s.name === claim.metadata.labels?.[LABELS.service]);
      if (!cfg) continue; // deleted with its service above
      const since = this.#orphanSince.get(name) ?? now;
      this.#orphanSince.set(name, since);
      if (cfg.idle.afterMs <= 0 || now - since < cfg.idle.afterMs) continue;
      if (cfg.idle.policy === 'delete') {
        this.#o.log.info({ claim: name }, 'deleting an idle claim no session came back to');
        await this.#o.client.delete(SANDBOX_CLAIM, this.#o.namespace, name);
        this.gone(name);
      } else if (!this.#suspended.has(name)) {
        const o = observe(claim, undefined);
        if (o.phase === 'unbound') continue;
        // Already asked (by an earlier gateway, before a restart): nothing to write.
        const mode = (this.#o.sandbox(o.sandbox)?.spec as { operatingMode?: string } | undefined)?.operatingMode;
        if (mode !== 'Suspended') {
          await this.#o.client.patch(SANDBOX, this.#o.namespace, o.sandbox, { spec: { operatingMode: 'Suspended' } });
        }
        this.#suspended.add(name);
      }
    }
  }

  /**
   * Creates `want` when the list had no such object, or merge-patches what the gateway owns when it drifted.
   * An object of that name the list missed (its labels changed by hand) is read and patched back.
   */
  async #upsert(type: ResourceType, want: KubeResource, listed: Map<string, KubeResource>): Promise<void> {
    const { client, namespace } = this.#o;
    const name = want.metadata.name;
    let have = listed.get(name) ?? null;
    if (!have) {
      try {
        await client.create(type, namespace, withLastApplied(want));
        this.#o.log.info({ kind: type.kind, name }, 'created');
        return;
      } catch (err) {
        if (!(err instanceof KubeRequestError) || err.failure !== 'conflict') throw err;
      }
      have = await client.get(type, namespace, name);
      if (!have) return; // deleted meanwhile: created at the next pass
    }
    const patch = ownedPatch(have, want);
    if (patch === undefined) return;
    const key = `${type.plural}/${name}`;
    const wanted = JSON.stringify([want.metadata.labels, want.spec]);
    if (this.#unkept.get(key) === wanted) return; // told once: the server does not keep it
    const fields = Object.keys(patch.spec ?? {});
    const stored = await client.patch(type, namespace, name, patch);
    this.#o.log.info({ kind: type.kind, name, fields }, 'updated to the manifest');
    // A field the server prunes (a CRD older than the gateway) would be patched again every pass, forever.
    if (stored && ownedPatch(stored, want) !== undefined) {
      this.#unkept.set(key, wanted);
      this.#o.log.warn(
        { kind: type.kind, name, fields },
        'the API server did not keep what the gateway wrote (pruned by an older CRD?); not patched again until the manifest changes',
      );
    } else this.#unkept.delete(key);
  }
}
