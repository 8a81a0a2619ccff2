/**
 * @module
 * Namespaced custom objects (agent-sandbox kinds) over @kubernetes/client-node 1.x: get, list (pods too), create,
 * JSON merge patch, delete, each with the per-call timeout and keep-alive agent of `client.ts`; every
 * failure a `KubeRequestError` (404 as null / false). Watching is `informer.ts`. Used by the Kubernetes
 * runtime and the memory server's claim watcher.
 */
import {
  type ConfigurationOptions,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type ObservableMiddleware,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { ResourceType } from './agent-sandbox.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, keepAliveAgents, MAX_REQUEST_TIMEOUT_MS, orNull, withTimeout } from './client.ts';
import { KubeRequestError } from './errors.ts';
import type { KubeResource } from './types.ts';

/** A list and the resourceVersion it was read at. */
export interface ObjectList {
  items: KubeResource[];
  resourceVersion: string;
}

/** Calls on namespaced custom objects. Every method throws `KubeRequestError` except where null/false is said. */
export interface ObjectClient {
  /** `get`; null when not found. */
  get(type: ResourceType, namespace: string, name: string): Promise<KubeResource | null>;
  /** `list`, optionally by an equality label selector (`a=b,c=d`). */
  list(type: ResourceType, namespace: string, labelSelector?: string): Promise<ObjectList>;
  /** `create`; a 409 (exists) throws with failure `conflict`. */
  create(type: ResourceType, namespace: string, obj: KubeResource): Promise<KubeResource>;
  /** JSON merge patch (RFC 7386); null when not found. */
  patch(type: ResourceType, namespace: string, name: string, patch: object): Promise<KubeResource | null>;
  /** `delete` (background propagation); false when it was not there. */
  delete(type: ResourceType, namespace: string, name: string): Promise<boolean>;
}

/**
 * Make an `ObjectClient` over a loaded kubeconfig.
 * @param timeoutMs per-call timeout, 1..10000 ms @default 5000
 * @throws Error when `timeoutMs` is out of range
 */
export function createObjectClient(kc: KubeConfig, timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS): ObjectClient {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_REQUEST_TIMEOUT_MS) {
    throw new Error(
      `Cannot create the object client as 'timeoutMs' must be an integer in 1..${MAX_REQUEST_TIMEOUT_MS}: got ${timeoutMs}`,
    );
  }
  const api = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const reuse = keepAliveAgents();
  const call = <T>(what: string, run: (o: ConfigurationOptions<ObservableMiddleware>) => Promise<T>) =>
    withTimeout(what, timeoutMs, run, reuse);
  const where = (type: ResourceType, namespace: string) => ({
    group: type.group,
    version: type.version,
    namespace,
    plural: type.plural,
  });
  const label = (verb: string, type: ResourceType, namespace: string, name?: string) =>
    `${verb} ${type.plural}.${type.group} ${namespace}${name ? `/${name}` : ''}`;

  return {
    async get(type, namespace, name) {
      const what = label('get', type, namespace, name);
      const obj = await orNull(
        call(what, (o) => api.getNamespacedCustomObject({ ...where(type, namespace), name }, o)),
      );
      return obj === null ? null : checked(what, obj);
    },
    async list(type, namespace, labelSelector) {
      const what = label('list', type, namespace);
      // Core pods (the Kubernetes runtime watches its sandboxes' containers) are no custom objects.
      const out = await call(what, (o) =>
        type.group === '' && type.plural === 'pods'
          ? core.listNamespacedPod({ namespace, labelSelector }, o)
          : api.listNamespacedCustomObject({ ...where(type, namespace), labelSelector }, o),
      );
      if (!out || !Array.isArray(out.items)) throw new KubeRequestError(what, 'bad_response');
      return {
        items: (out.items as unknown[]).map((i) => checked(what, i)),
        resourceVersion: String(out.metadata?.resourceVersion ?? ''),
      };
    },
    async create(type, namespace, obj) {
      const what = label('create', type, namespace, obj.metadata.name);
      return checked(
        what,
        await call(what, (o) => api.createNamespacedCustomObject({ ...where(type, namespace), body: obj }, o)),
      );
    },
    async patch(type, namespace, name, body) {
      const what = label('patch', type, namespace, name);
      const obj = await orNull(
        call(what, (o) =>
          api.patchNamespacedCustomObject(
            { ...where(type, namespace), name, body },
            // The generated client sends JSON patch by default; ours are merge patches.
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch, o),
          ),
        ),
      );
      return obj === null ? null : checked(what, obj);
    },
    async delete(type, namespace, name) {
      const what = label('delete', type, namespace, name);
      const out = await orNull(
        call(what, (o) =>
          api.deleteNamespacedCustomObject({ ...where(type, namespace), name, propagationPolicy: 'Background' }, o),
        ),
      );
      return out !== null;
    },
  };
}

function checked(what: string, obj: unknown): KubeResource {
  const o = obj as KubeResource | null;
  if (!o || typeof o !== 'object' || typeof o.metadata?.uid !== 'string' || typeof o.metadata.name !== 'string') {
    throw new KubeRequestError(what, 'bad_response');
  }
  return o;
}
