/**
 * @module
 * The RBAC the API-server double enforces, one Role per user, written as Kubernetes `PolicyRule`s: the
 * memory server's (get pods, sandboxes, sandboxclaims; list and watch sandboxclaims) and the gateway's
 * (claims, templates, pools: all it writes; sandboxes: read and patch; pods: read). The Helm chart test compares the
 * chart's Roles with these, so the double refuses exactly what a cluster with the chart would refuse.
 */

/** One rule of a Role, as in `rbac.authorization.k8s.io/v1`. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The memory server's Role in each sandbox namespace (plus the ClusterRole `create tokenreviews`). */
export const MEMORY_SERVER_RULES: readonly PolicyRule[] = Object.freeze([
  { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
  { apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get'] },
  { apiGroups: ['extensions.agents.x-k8s.io'], resources: ['sandboxclaims'], verbs: ['get', 'list', 'watch'] },
]);

/** The gateway's Role in its sandbox namespace. */
export const GATEWAY_RULES: readonly PolicyRule[] = Object.freeze([
  {
    apiGroups: ['extensions.agents.x-k8s.io'],
    resources: ['sandboxclaims', 'sandboxtemplates', 'sandboxwarmpools'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list', 'watch', 'patch'] },
  // Read only: a sandbox's container that terminates or crash-loops shows only on its pod.
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
]);

/** True when `rules` allow `verb` on `resource` (a plural, or `plural/status`) of `group`. */
export function allows(rules: readonly PolicyRule[], verb: string, group: string, resource: string): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups.includes(group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );
}
