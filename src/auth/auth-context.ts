/**
 * @module
 * What a verified key may do: its tenant, agent, session and whether it is an admin key; and the rule
 * that picks the namespace of a call (`namespace_mismatch` when a key names one it may not reach).
 */
import { forbidden, invalidRequest, namespaceMismatch } from '../common/errors.ts';
import type { Ticket } from '../common/light-first.ts';
import type { KeyRecord } from '../store/key-store.ts';

/** The caller, as `req.auth`. */
export interface AuthContext {
  keyId: string;
  /** A tenant name, or `*` for the bootstrap admin. */
  tenant: string;
  agent: string | null;
  session: string | null;
  admin: boolean;
  /** `tenant:agent` for agent keys; null for admin keys. */
  namespace: string | null;
  /** Epoch ms or null. */
  expiresAt: number | null;
  /**
   * The light-lane ticket of the request this context was verified for (`common/light-first.ts`): the
   * heavy work the request starts names it, so the request stops counting as light. Absent outside a request.
   */
  lane?: Ticket | null;
}

/** The auth context of a stored key. */
export function contextOf(key: KeyRecord): AuthContext {
  return {
    keyId: key.id,
    tenant: key.tenant,
    agent: key.agent,
    session: key.session,
    admin: key.admin,
    namespace: key.agent === null ? null : `${key.tenant}:${key.agent}`,
    expiresAt: key.expiresAt,
    lane: null,
  };
}

/** Tenant and agent names: lower-case DNS-like labels (Kubernetes names fit). */
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,126}[a-z0-9])?$/;

/** Checks a `tenant:agent` text. @throws 400 naming `field`. */
export function parseNamespace(text: string, field = 'namespace'): { tenant: string; agent: string } {
  const i = text.indexOf(':');
  const tenant = i < 0 ? '' : text.slice(0, i);
  const agent = i < 0 ? '' : text.slice(i + 1);
  if (!NAME_PATTERN.test(tenant) || !NAME_PATTERN.test(agent)) {
    throw invalidRequest(
      field,
      `'${text.slice(0, 80)}' is not a namespace of the form tenant:agent (lower-case names)`,
    );
  }
  return { tenant, agent };
}

/**
 * The namespace a memory call works on.
 * Agent keys: their own (naming another -> 403 `namespace_mismatch`). Admin keys: the one named, within their tenant.
 * @throws {TetherError} 400 when an admin key names none; 403 `namespace_mismatch`.
 */
export function resolveNamespace(auth: AuthContext, requested: string | undefined): string {
  if (auth.namespace !== null) {
    if (requested === undefined || requested === auth.namespace) return auth.namespace;
    parseNamespace(requested);
    throw namespaceMismatch(auth.namespace, requested);
  }
  if (requested === undefined) throw invalidRequest('namespace', 'an admin key must name a namespace');
  const { tenant } = parseNamespace(requested);
  if (auth.tenant !== '*' && auth.tenant !== tenant) {
    throw namespaceMismatch(`${auth.tenant}:*`, requested);
  }
  return requested;
}

/** Admin routes. @throws 403 `forbidden` for agent keys. */
export function requireAdmin(auth: AuthContext): void {
  if (!auth.admin) throw forbidden('this call needs an admin key');
}

/** Whether an admin key reaches `tenant`. */
export function reachesTenant(auth: AuthContext, tenant: string): boolean {
  return auth.admin && (auth.tenant === '*' || auth.tenant === tenant);
}
