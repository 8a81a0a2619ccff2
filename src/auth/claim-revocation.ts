/**
 * @module
 * Identity that ends with the claim: watches SandboxClaims (list + watch, `kube/informer.ts`) in every
 * namespace that holds workload keys and revokes the keys minted for a claim when that claim — that uid —
 * is deleted, or is replaced by a same-name claim with another uid. Level-based: after each (re)list, keys
 * older than the list whose claim is no longer there are revoked too (deleted while nobody watched).
 * Wired by `cli/kubernetes-option.ts`; needs `list` and `watch` on sandboxclaims (the chart's Role).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../common/clock.ts';
import type { Logger } from '../common/log.ts';
import { SANDBOX_CLAIM } from '../kube/agent-sandbox.ts';
import { type Informer, startInformer } from '../kube/informer.ts';
import type { ObjectClient } from '../kube/object-client.ts';
import type { KubeResource } from '../kube/types.ts';
import type { KeyService } from './key-service.ts';

/** Options of `ClaimRevoker`. */
export interface ClaimRevokerOptions {
  kubeconfig: KubeConfig;
  client: ObjectClient;
  keys: KeyService;
  /** The key service's clock (key creation times are compared with list times). */
  clock: Clock;
  log: Logger;
  /** Called with the ids revoked (metrics, tests). */
  onRevoked?: (ids: string[], why: string) => void;
}

/** Watches claims per namespace and revokes their keys when they go. */
export class ClaimRevoker {
  readonly #o: ClaimRevokerOptions;
  readonly #watched = new Map<string, Informer>();
  /** namespace/name -> uid of the claims seen. */
  readonly #uids = new Map<string, string>();
  #closed = false;
  #warned = false;

  constructor(options: ClaimRevokerOptions) {
    this.#o = options;
  }

  /** Starts watching the namespaces that already hold workload keys. */
  async start(): Promise<void> {
    for (const ns of await this.#o.keys.workloadTenants()) this.watch(ns);
  }

  /** Watches claims in `namespace` (once). Resolves when its first list is done. */
  watch(namespace: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const existing = this.#watched.get(namespace);
    if (existing) return existing.synced;
    let listStarted = this.#o.clock.now();
    const informer = startInformer({
      kubeconfig: this.#o.kubeconfig,
      client: {
        ...this.#o.client,
        list: async (type, ns, selector) => {
          listStarted = this.#o.clock.now();
          const out = await this.#o.client.list(type, ns, selector);
          // Level-based: a key older than this list whose claim is not in it lost its claim unseen.
          const live = new Set(out.items.map((c) => c.metadata.uid));
          const before = listStarted;
          void this.#revoke(namespace, (k) => !live.has(k.claimUid) && k.createdAt < before, 'claim gone (relist)');
          return out;
        },
      },
      type: SANDBOX_CLAIM,
      namespace,
      onUpsert: (claim) => this.#seen(namespace, claim),
      onDelete: (claim) => {
        this.#uids.delete(`${namespace}/${claim.metadata.name}`);
        void this.#revokeClaim(namespace, claim.metadata.name, claim.metadata.uid, 'claim deleted');
      },
      onError: (err) => {
        if (this.#warned) return;
        this.#warned = true;
        this.#o.log.warn(
          { namespace, err: (err as Error).message },
          'cannot watch sandboxclaims (grant list and watch on sandboxclaims); keys then live until their TTL',
        );
      },
    });
    this.#watched.set(namespace, informer);
    return informer.synced;
  }

  /** Stops every watch. Safe twice. */
  close(): void {
    this.#closed = true;
    for (const i of this.#watched.values()) i.stop();
    this.#watched.clear();
  }

  #seen(namespace: string, claim: KubeResource): void {
    const k = `${namespace}/${claim.metadata.name}`;
    const old = this.#uids.get(k);
    this.#uids.set(k, claim.metadata.uid);
    // The same name with another uid: the old claim was deleted and made again while we missed the delete.
    if (old !== undefined && old !== claim.metadata.uid) {
      void this.#revokeClaim(namespace, claim.metadata.name, old, 'claim replaced');
    }
    this.#warned = false;
  }

  #revokeClaim(namespace: string, name: string, uid: string, why: string): Promise<void> {
    return this.#revoke(namespace, (k) => k.agent === name && k.claimUid === uid, why);
  }

  async #revoke(
    namespace: string,
    pick: (k: { agent: string | null; claimUid: string; createdAt: number }) => boolean,
    why: string,
  ): Promise<void> {
    try {
      const ids = await this.#o.keys.revokeWorkloadKeys(namespace, pick);
      if (ids.length === 0) return;
      this.#o.log.info({ namespace, keys: ids, why }, 'workload keys revoked with their claim');
      this.#o.onRevoked?.(ids, why);
    } catch (err) {
      this.#o.log.error({ namespace, err: (err as Error).message }, 'revoking workload keys failed');
    }
  }
}
