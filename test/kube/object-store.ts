/**
 * @module
 * The API-server double's object store, as etcd + kube-apiserver keep it: one resourceVersion counter for
 * every write, uids, `generation` bumped on spec changes, and a bounded event log that watches read from
 * (a resourceVersion older than the log is "too old": 410 Gone). Label and field selectors for list and
 * watch. Custom kinds are pruned and defaulted by their CRD schema on every write (`crd-schemas.ts`), as
 * kube-apiserver does, so an object read back differs from the one written. No HTTP here (`rest.ts` serves
 * it) and no controllers (`controller.ts`).
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ResourceType } from '../../src/kube/agent-sandbox.ts';
import { applyCrdSchema } from './crd-schemas.ts';
import type { WireObject } from './objects.ts';

/** A watch event type, as the API server names it. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change to one object. `object` is a snapshot taken at that resourceVersion. */
export interface StoreEvent {
  type: WatchEventType;
  /** `<plural>.<group>` of the object. */
  resource: string;
  object: WireObject;
  rv: number;
}

/** Filters of list and watch. */
export interface Selector {
  namespace?: string;
  /** `a=b,c!=d,e` (equality-based label selector). */
  labelSelector?: string;
  /** `metadata.name=x,metadata.namespace=y`. */
  fieldSelector?: string;
}

/** How many events the log keeps before older resourceVersions are "too old". @default 5000 */
const LOG_SIZE = 5000;

/** Objects of every kind, their resourceVersions and the change log. */
export class ObjectStore {
  readonly #objects = new Map<string, WireObject>();
  readonly #log: StoreEvent[] = [];
  readonly #listeners = new Set<(e: StoreEvent) => void>();
  #rv = 1000;
  /** The oldest resourceVersion a watch may start from. */
  #oldest = 1000;

  /** The current resourceVersion (of the last write). */
  get resourceVersion(): number {
    return this.#rv;
  }

  /** A copy of the stored object, or undefined. */
  get(type: ResourceType, namespace: string, name: string): WireObject | undefined {
    const obj = this.#objects.get(key(type, namespace, name));
    return obj ? clone(obj) : undefined;
  }

  /** Copies of the objects of `type` matching `selector`, ordered by namespace and name. */
  list(type: ResourceType, selector: Selector = {}): WireObject[] {
    const match = matcher(selector);
    const prefix = `${resourceOf(type)}/`;
    return [...this.#objects.entries()]
      .filter(([k, o]) => k.startsWith(prefix) && match(o))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, o]) => clone(o));
  }

  /**
   * Stores a new object: fresh uid, creationTimestamp, generation 1, resourceVersion.
   * @returns the stored copy, or null when an object of that name exists (409 AlreadyExists)
   */
  create(type: ResourceType, obj: WireObject): WireObject | null {
    const k = key(type, obj.metadata.namespace, obj.metadata.name);
    if (this.#objects.has(k)) return null;
    const stored = applyCrdSchema(type, clone(obj));
    stored.metadata.uid = stored.metadata.uid || randomUUID();
    stored.metadata.creationTimestamp ||= new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    stored.metadata.generation = 1;
    return this.#write(type, k, stored, 'ADDED');
  }

  /**
   * Replaces a stored object (same uid); bumps `generation` when `spec` changed. Writes nothing and returns
   * the stored copy when nothing changed (as the API server does for a no-op update).
   * @returns the stored copy, or null when there is no such object
   */
  update(type: ResourceType, obj: WireObject): WireObject | null {
    const k = key(type, obj.metadata.namespace, obj.metadata.name);
    const old = this.#objects.get(k);
    if (!old) return null;
    const next = applyCrdSchema(type, clone(obj));
    next.metadata.uid = old.metadata.uid;
    next.metadata.creationTimestamp = old.metadata.creationTimestamp;
    next.metadata.resourceVersion = old.metadata.resourceVersion;
    next.metadata.generation = old.metadata.generation ?? 1;
    // Key order aside (a defaulted key put back moves to the end), as the API server compares.
    if (isDeepStrictEqual(next, old)) return clone(old);
    if (!isDeepStrictEqual(next.spec, old.spec)) next.metadata.generation++;
    return this.#write(type, k, next, 'MODIFIED');
  }

  /** Stores `obj` whether or not it exists (the double's own set-up; keeps the given uid). */
  put(type: ResourceType, obj: WireObject): WireObject {
    const k = key(type, obj.metadata.namespace, obj.metadata.name);
    return this.#write(type, k, applyCrdSchema(type, clone(obj)), this.#objects.has(k) ? 'MODIFIED' : 'ADDED');
  }

  /** Deletes an object; returns the deleted copy (at its final resourceVersion), or null. */
  delete(type: ResourceType, namespace: string, name: string): WireObject | null {
    const k = key(type, namespace, name);
    const old = this.#objects.get(k);
    if (!old) return null;
    this.#objects.delete(k);
    old.metadata.resourceVersion = String(++this.#rv);
    this.#emit({ type: 'DELETED', resource: resourceOf(type), object: clone(old), rv: this.#rv });
    return clone(old);
  }

  /**
   * Events of `type` after resourceVersion `since` matching `selector`, oldest first.
   * @returns 'gone' when `since` is older than the log keeps (the watch must list again)
   */
  eventsSince(type: ResourceType, since: number, selector: Selector = {}): StoreEvent[] | 'gone' {
    if (since < this.#oldest) return 'gone';
    const match = matcher(selector);
    const resource = resourceOf(type);
    return this.#log.filter((e) => e.rv > since && e.resource === resource && match(e.object));
  }

  /** Forgets the event log, as etcd compaction does: watches from before now get 410 Gone. */
  compact(): void {
    this.#log.length = 0;
    this.#oldest = this.#rv;
  }

  /** Calls `fn` after every write; returns the unsubscribe function. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #write(type: ResourceType, k: string, obj: WireObject, kind: WatchEventType): WireObject {
    obj.metadata.resourceVersion = String(++this.#rv);
    this.#objects.set(k, obj);
    this.#emit({ type: kind, resource: resourceOf(type), object: clone(obj), rv: this.#rv });
    return clone(obj);
  }

  #emit(e: StoreEvent): void {
    this.#log.push(e);
    if (this.#log.length > LOG_SIZE) {
      const dropped = this.#log.splice(0, this.#log.length - LOG_SIZE);
      this.#oldest = dropped[dropped.length - 1]!.rv;
    }
    for (const fn of this.#listeners) fn(e);
  }
}

/** `<plural>.<group>`, or the plural for core kinds. */
export function resourceOf(type: ResourceType): string {
  return type.group === '' ? type.plural : `${type.plural}.${type.group}`;
}

function key(type: ResourceType, namespace: string, name: string): string {
  return `${resourceOf(type)}/${namespace}/${name}`;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

/**
 * A predicate for `selector`.
 * @throws Error for a selector the double does not understand (set-based `in (...)`, unknown fields)
 */
export function matcher(selector: Selector): (o: WireObject) => boolean {
  const tests: ((o: WireObject) => boolean)[] = [];
  if (selector.namespace !== undefined) tests.push((o) => o.metadata.namespace === selector.namespace);
  for (const term of split(selector.labelSelector)) {
    const m = /^([^!=\s]+)\s*(!=|==|=)?\s*([^\s]*)$/.exec(term);
    if (!m) throw new Error(`unable to parse requirement: ${term}`);
    const [, label, op, value] = m as unknown as [string, string, string | undefined, string];
    if (op === undefined) tests.push((o) => o.metadata.labels?.[label] !== undefined);
    else if (op === '!=') tests.push((o) => o.metadata.labels?.[label] !== value);
    else tests.push((o) => o.metadata.labels?.[label] === value);
  }
  for (const term of split(selector.fieldSelector)) {
    const [field, value] = term.split('=') as [string, string | undefined];
    if (field === 'metadata.name') tests.push((o) => o.metadata.name === value);
    else if (field === 'metadata.namespace') tests.push((o) => o.metadata.namespace === value);
    else throw new Error(`field label not supported: ${field}`);
  }
  return (o) => tests.every((t) => t(o));
}

function split(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
