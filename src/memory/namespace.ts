/**
 * @module
 * Namespace text helpers shared by the engine, the reader and the server: a namespace is `tenant:agent`
 * (already checked by `auth/auth-context.ts` before it reaches the engine). Pure.
 */

/** The tenant part of `tenant:agent`. */
export function tenantOf(namespace: string): string {
  return namespace.slice(0, namespace.indexOf(':'));
}
