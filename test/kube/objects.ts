/**
 * @module
 * Wire-format builders for the API-server double: Pod, Sandbox, SandboxClaim, SandboxWarmPool with
 * ownerReferences exactly as agent-sandbox writes them, `Status` failure bodies, generated names.
 * Pure; used by `test/kube/cluster.ts` and `test/kube/double.ts`.
 */
import { randomUUID } from 'node:crypto';
import {
  apiVersionOf,
  POD,
  type ResourceType,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_WARM_POOL,
} from '../../src/kube/agent-sandbox.ts';
import type { OwnerReference } from '../../src/kube/types.ts';

/** A stored object: JSON as served. */
export interface WireObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

let resourceVersion = 1000;

/** Metadata of a new object (fresh uid and resourceVersion). */
export function newMeta(namespace: string, name: string, owner?: WireObject): WireObject['metadata'] {
  return {
    name,
    namespace,
    uid: randomUUID(),
    resourceVersion: String(++resourceVersion),
    creationTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(owner ? { ownerReferences: [controllerRef(owner)] } : {}),
  };
}

/** The controller reference to `owner`, as controller-runtime's SetControllerReference writes it. */
export function controllerRef(owner: WireObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Bump the resourceVersion after a change. */
export function touch(obj: WireObject): void {
  obj.metadata.resourceVersion = String(++resourceVersion);
}

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** A name like the API server's `generateName`: `prefix` + 5 random characters. */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return `${prefix}${suffix}`;
}

/** A SandboxWarmPool. */
export function warmPoolObject(namespace: string, name: string, template: string, replicas = 1): WireObject {
  return {
    apiVersion: apiVersionOf(SANDBOX_WARM_POOL),
    kind: SANDBOX_WARM_POOL.kind,
    metadata: newMeta(namespace, name),
    spec: { replicas, sandboxTemplateRef: { name: template } },
    status: { replicas, readyReplicas: replicas },
  };
}

/** A SandboxClaim of `warmPool`. */
export function claimObject(namespace: string, name: string, warmPool: string): WireObject {
  return {
    apiVersion: apiVersionOf(SANDBOX_CLAIM),
    kind: SANDBOX_CLAIM.kind,
    metadata: { ...newMeta(namespace, name), generation: 1 },
    spec: { warmPoolRef: { name: warmPool } },
    status: {},
  };
}

/** A Sandbox controlled by `owner` (a SandboxWarmPool or a SandboxClaim). */
export function sandboxObject(namespace: string, name: string, owner: WireObject, template: string): WireObject {
  return {
    apiVersion: apiVersionOf(SANDBOX),
    kind: SANDBOX.kind,
    metadata: {
      ...newMeta(namespace, name, owner),
      generation: 1,
      labels: { 'agents.x-k8s.io/sandbox-template-ref': template },
    },
    spec: { podTemplate: { spec: { containers: [{ name: 'agent', image: 'tether-agent:latest' }] } } },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'DependenciesReady' }] },
  };
}

/** A running Pod controlled by `sandbox`, with the sandbox's service account. */
export function podObject(sandbox: WireObject, serviceAccount: string): WireObject {
  const meta = newMeta(sandbox.metadata.namespace, sandbox.metadata.name, sandbox);
  return {
    apiVersion: apiVersionOf(POD),
    kind: POD.kind,
    metadata: { ...meta, labels: { 'agents.x-k8s.io/sandbox-name-hash': meta.uid.slice(0, 8) } },
    spec: {
      serviceAccountName: serviceAccount,
      automountServiceAccountToken: false,
      nodeName: 'kind-worker',
      containers: [{ name: 'agent', image: 'tether-agent:latest' }],
    },
    status: { phase: 'Running', podIP: '10.244.0.7' },
  };
}

/** A `Status` failure body as the API server sends it. */
export function statusBody(
  code: number,
  reason: string,
  message: string,
  details?: { name?: string; group?: string; kind?: string },
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details ? { details } : {}),
    code,
  };
}

/** The 404 `Status` for a missing object. */
export function notFoundStatus(type: ResourceType, name: string): Record<string, unknown> {
  const res = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
  return statusBody(404, 'NotFound', `${res} "${name}" not found`, {
    name,
    ...(type.group === '' ? {} : { group: type.group }),
    kind: type.plural,
  });
}

/** The 403 `Status` for a call RBAC does not allow. */
export function forbiddenStatus(
  user: string,
  verb: string,
  type: { group: string; plural: string },
  namespace: string | undefined,
  name: string | undefined,
): Record<string, unknown> {
  const res = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
  const where = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
  return statusBody(
    403,
    'Forbidden',
    `${res}${name ? ` "${name}"` : ''} is forbidden: User "${user}" cannot ${verb} resource "${type.plural}" in API group "${type.group}" ${where}`,
    { ...(name ? { name } : {}), ...(type.group === '' ? {} : { group: type.group }), kind: type.plural },
  );
}
