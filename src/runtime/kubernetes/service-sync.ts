/**
 * @module
 * The level-based resync of the Kubernetes runtime, run at start and every `resyncMs` (sooner after an
 * error): each service has its SandboxTemplate and SandboxWarmPool as `objects.ts` builds them (created,
 * or merge-patched when they drifted), objects of removed services are deleted, claim deletions that
 * failed are retried, and claims no instance owns (left by an earlier gateway, their session not back)
 * follow the service's idle policy: deleted (delete mode) or suspended (pause mode) after `session-timeout`.
 */
import type { Clock } from '../../common/clock.ts';
import type { Logger } from '../../common/log.ts';
import type { ServiceConfig } from '../../gateway/services/service-config.ts';
import {
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
} from '../../kube/agent-sandbox.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import { LABELS, MANAGED_SELECTOR, type SandboxObjectOptions, templateFor, warmPoolFor } from './objects.ts';
import { observe } from './observed.ts';

/** Options of `ServiceSync`. */
export interface ServiceSyncOptions extends SandboxObjectOptions {
  client: ObjectClient;
  /** The services as they are now (a reload changes them). */
  services: () => readonly ServiceConfig[];
  log: Logger;
  clock: Clock;
  /** @default 30000 */
  resyncMs?: number;
  /** The managed claims as last seen (the runtime's informer). */
  claims: () => KubeResource[];
  /** True when an instance of this runtime owns the claim. */
  owned: (claim: string) => boolean;
}

/** Keeps the cluster's templates, pools and unowned claims where the services say. */
export class ServiceSync {
  readonly #o: ServiceSyncOptions;
  readonly #orphanSince = new Map<string, number>();
  readonly #suspended = new Set<string>();
  readonly #toDelete = new Map<string, string>(); // claim -> uid
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #backoffMs = 1000;
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

  async #run(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#pass();
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
    const names = new Set(this.#o.services().map((s) => s.name));
    for (const cfg of this.#o.services()) {
      await this.#upsert(SANDBOX_TEMPLATE, templateFor(cfg, this.#o));
      await this.#upsert(SANDBOX_WARM_POOL, warmPoolFor(cfg, this.#o));
    }
    for (const type of [SANDBOX_WARM_POOL, SANDBOX_TEMPLATE, SANDBOX_CLAIM]) {
      for (const obj of (await client.list(type, namespace, MANAGED_SELECTOR)).items) {
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
      const now = this.#o.claims().find((c) => c.metadata.name === claim);
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
      if (cfg.sessionTimeoutMs <= 0 || now - since < cfg.sessionTimeoutMs) continue;
      if (cfg.idlePolicy === 'delete') {
        this.#o.log.info({ claim: name }, 'deleting an idle claim no session came back to');
        await this.#o.client.delete(SANDBOX_CLAIM, this.#o.namespace, name);
        this.gone(name);
      } else if (!this.#suspended.has(name)) {
        const o = observe(claim, undefined);
        if (o.phase === 'unbound') continue;
        await this.#o.client.patch(SANDBOX, this.#o.namespace, o.sandbox, { spec: { operatingMode: 'Suspended' } });
        this.#suspended.add(name);
      }
    }
  }

  /** Creates `want`, or merge-patches the stored object when its labels or spec differ. */
  async #upsert(type: ResourceType, want: KubeResource): Promise<void> {
    const { client, namespace } = this.#o;
    const have = await client.get(type, namespace, want.metadata.name);
    if (!have) {
      await client.create(type, namespace, want);
      this.#o.log.info({ kind: type.kind, name: want.metadata.name }, 'created');
      return;
    }
    const patch: Record<string, unknown> = {};
    const labels = { ...have.metadata.labels, ...want.metadata.labels };
    if (JSON.stringify(labels) !== JSON.stringify(have.metadata.labels ?? {})) patch.metadata = { labels };
    const spec = mergeDiff(have.spec ?? {}, want.spec ?? {});
    if (spec !== undefined) patch.spec = spec;
    if (Object.keys(patch).length === 0) return;
    await client.patch(type, namespace, want.metadata.name, patch);
    this.#o.log.info({ kind: type.kind, name: want.metadata.name }, 'updated to the manifest');
  }
}

/**
 * The RFC 7386 merge patch that turns `have` into `want` (keys only in `have` become null), or undefined
 * when they are equal.
 */
export function mergeDiff(have: unknown, want: unknown): unknown {
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(have) || !isObj(want)) return JSON.stringify(have) === JSON.stringify(want) ? undefined : want;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(have)) if (!(k in want)) out[k] = null;
  for (const [k, v] of Object.entries(want)) {
    const d = mergeDiff(have[k], v);
    if (d !== undefined) out[k] = d;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}
