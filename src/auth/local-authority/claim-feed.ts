/**
 * @module
 * The local authority's SandboxClaims as a Kubernetes list + watch source: a resourceVersion counter, the
 * current claims, and a bounded log of ADDED/DELETED events a watch replays from a resourceVersion (410
 * when it is older than the log). Lets the memory server's claim watcher work on `tether up` exactly as on
 * a cluster. Written by `authority.ts`, served by `api-server.ts`.
 */
import type { KubeObject } from '../../kube/types.ts';

/** One change of one claim. */
export interface ClaimEvent {
  type: 'ADDED' | 'DELETED';
  object: KubeObject;
  rv: number;
}

const LOG_SIZE = 1000;

/** Claims with resourceVersions and a change log. */
export class ClaimFeed {
  readonly #claims = new Map<string, KubeObject>(); // ns/name
  readonly #log: ClaimEvent[] = [];
  readonly #listeners = new Set<(e: ClaimEvent) => void>();
  #rv = 1;
  #oldest = 1;

  /** The resourceVersion of the last change. */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** Records a new claim (the object gets its resourceVersion). */
  added(claim: KubeObject): void {
    const obj = { ...claim, metadata: { ...claim.metadata, resourceVersion: String(++this.#rv) } };
    this.#claims.set(`${obj.metadata.namespace}/${obj.metadata.name}`, obj);
    this.#emit({ type: 'ADDED', object: obj, rv: this.#rv });
  }

  /** Records that the claim `namespace/name` with `uid` is gone (no-op for another uid). */
  deleted(namespace: string, name: string, uid: string): void {
    const k = `${namespace}/${name}`;
    const obj = this.#claims.get(k);
    if (!obj || obj.metadata.uid !== uid) return;
    this.#claims.delete(k);
    const gone = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } };
    this.#emit({ type: 'DELETED', object: gone, rv: this.#rv });
  }

  /** The claims of `namespace`. */
  list(namespace: string): KubeObject[] {
    return [...this.#claims.values()].filter((c) => c.metadata.namespace === namespace);
  }

  /** Events of `namespace` after `since`, or 'gone' when the log no longer reaches back that far. */
  since(namespace: string, since: number): ClaimEvent[] | 'gone' {
    if (since < this.#oldest) return 'gone';
    return this.#log.filter((e) => e.rv > since && e.object.metadata.namespace === namespace);
  }

  /** Calls `fn` on every change; returns the unsubscribe function. */
  subscribe(fn: (e: ClaimEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #emit(e: ClaimEvent): void {
    this.#log.push(e);
    if (this.#log.length > LOG_SIZE) this.#oldest = this.#log.splice(0, this.#log.length - LOG_SIZE).at(-1)!.rv;
    for (const fn of this.#listeners) fn(e);
  }
}
