/**
 * @module
 * The API groups, versions, kinds and plurals of the objects in a sandbox's owner chain
 * (core Pod, kubernetes-sigs/agent-sandbox Sandbox, SandboxClaim, SandboxWarmPool, all v1beta1).
 * Constants only; used by `kube/client.ts`, `auth/exchange/owner-chain.ts` and `test/kube/`.
 */

/** Where a kind lives: group ('' for core), version, kind, and its URL plural. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
}

/** Core Pod. */
export const POD: ResourceType = Object.freeze({ group: '', version: 'v1', kind: 'Pod', plural: 'pods' });

/** agent-sandbox Sandbox (agents.x-k8s.io). */
export const SANDBOX: ResourceType = Object.freeze({
  group: 'agents.x-k8s.io',
  version: 'v1beta1',
  kind: 'Sandbox',
  plural: 'sandboxes',
});

/** agent-sandbox SandboxClaim (extensions.agents.x-k8s.io). */
export const SANDBOX_CLAIM: ResourceType = Object.freeze({
  group: 'extensions.agents.x-k8s.io',
  version: 'v1beta1',
  kind: 'SandboxClaim',
  plural: 'sandboxclaims',
});

/** agent-sandbox SandboxWarmPool (extensions.agents.x-k8s.io). */
export const SANDBOX_WARM_POOL: ResourceType = Object.freeze({
  group: 'extensions.agents.x-k8s.io',
  version: 'v1beta1',
  kind: 'SandboxWarmPool',
  plural: 'sandboxwarmpools',
});

/** agent-sandbox SandboxTemplate (extensions.agents.x-k8s.io). */
export const SANDBOX_TEMPLATE: ResourceType = Object.freeze({
  group: 'extensions.agents.x-k8s.io',
  version: 'v1beta1',
  kind: 'SandboxTemplate',
  plural: 'sandboxtemplates',
});

/** `apiVersion` of a type: `v1` for core, else `group/version`. */
export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** The group of an `apiVersion` string, ignoring the version: `agents.x-k8s.io/v1beta1` -> `agents.x-k8s.io`, `v1` -> ''. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** True when an `apiVersion` + `kind` pair names `type` (any version). */
export function isKind(apiVersion: string, kind: string, type: ResourceType): boolean {
  return kind === type.kind && groupOf(apiVersion) === type.group;
}
