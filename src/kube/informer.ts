/**
 * @module
 * A list-then-watch cache of one custom kind in one namespace, on client-node's `ListWatch` (it resumes
 * from the last resourceVersion, lists again after 410 Gone and reports objects that vanished meanwhile
 * as deletions). What it adds: a restart with back-off after any other error (ListWatch stops there),
 * `synced` for the first list, and events that carry the object's uid. Level-based callers read `list()`.
 */
import { type KubeConfig, ListWatch, Watch } from '@kubernetes/client-node';
import { apiVersionOf, type ResourceType } from './agent-sandbox.ts';
import type { ObjectClient } from './object-client.ts';
import type { KubeResource } from './types.ts';

/** Options of `startInformer`. */
export interface InformerOptions {
  kubeconfig: KubeConfig;
  client: ObjectClient;
  type: ResourceType;
  namespace: string;
  /** Equality label selector, e.g. `app.kubernetes.io/managed-by=tether-gateway`. */
  labelSelector?: string;
  /** A new or changed object (also for each object of a list). */
  onUpsert?: (obj: KubeResource) => void;
  /** A deleted object, as last seen. */
  onDelete?: (obj: KubeResource) => void;
  /** A list or watch failed; the informer retries by itself after `retryMs`. */
  onError?: (err: unknown) => void;
  /** First retry delay after an error (ms); doubles up to 5 s. @default 200 */
  retryMs?: number;
}

/** A running informer. */
export interface Informer {
  /** Resolves after the first successful list. */
  synced: Promise<void>;
  /** True while the last list or watch succeeded (false after an error until the next list). */
  healthy(): boolean;
  /** The cached objects. */
  list(): KubeResource[];
  get(name: string): KubeResource | undefined;
  /** Stops watching. Safe twice. */
  stop(): void;
}

/** Starts a list+watch of `type` in `namespace`. */
export function startInformer(o: InformerOptions): Informer {
  const root = o.type.group === '' ? '/api' : '/apis'; // core kinds (pods) live under /api
  const path = `${root}/${apiVersionOf(o.type)}/namespaces/${o.namespace}/${o.type.plural}`;
  const listFn = async () => {
    const out = await o.client.list(o.type, o.namespace, o.labelSelector);
    healthy = true;
    markSynced();
    return { metadata: { resourceVersion: out.resourceVersion }, items: out.items as never[] };
  };
  let markSynced!: () => void;
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  let healthy = false;
  let stopped = false;
  let delay = o.retryMs ?? 200;
  let timer: NodeJS.Timeout | undefined;
  const lw = new ListWatch<never>(path, new Watch(o.kubeconfig), listFn, false, o.labelSelector);
  lw.on('add', (obj: KubeResource) => o.onUpsert?.(obj));
  lw.on('update', (obj: KubeResource) => o.onUpsert?.(obj));
  lw.on('delete', (obj: KubeResource) => o.onDelete?.(obj));
  lw.on('connect', () => {
    delay = o.retryMs ?? 200;
  });
  lw.on('error', (err: unknown) => {
    healthy = false;
    // stop() aborts the open watch, which ListWatch reports as an error: not one to tell anyone about.
    if (stopped) return;
    o.onError?.(err);
    // ListWatch stops after an error; start it again (it lists again when its resourceVersion is gone).
    timer = setTimeout(() => void lw.start().catch(() => {}), delay);
    timer.unref();
    delay = Math.min(5000, delay * 2);
  });
  void lw.start().catch((err: unknown) => o.onError?.(err));
  return {
    synced,
    healthy: () => healthy,
    list: () => lw.list(o.namespace) as unknown as KubeResource[],
    get: (name) => lw.get(name, o.namespace) as KubeResource | undefined,
    stop() {
      stopped = true;
      clearTimeout(timer);
      void lw.stop();
    },
  };
}
