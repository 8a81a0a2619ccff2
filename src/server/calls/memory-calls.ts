/**
 * @module
 * The memory calls — remember, recall, history, forget, registry read and replace — as one module that both
 * the HTTP routes (`routes/memories.ts`, `routes/registry.ts`) and the MCP tools (`mcp/tools.ts`) call, so a
 * tool and its route can never answer differently. Input is already parsed (Zod, at the route or tool);
 * here: tenancy (which namespace or tenant a key may name), the engine call, and the wire shape.
 */
import { type AuthContext, reachesTenant, requireAdmin, resolveNamespace } from '../../auth/auth-context.ts';
import { invalidRequest, namespaceMismatch } from '../../common/errors.ts';
import { TimeSlice } from '../../common/time-slice.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import { tenantOf } from '../../memory/namespace.ts';
import type { MemoryReader } from '../../memory/recall.ts';
import type { RegistryBook } from '../../memory/registry-book.ts';
import { decodeCursor, encodeCursor } from '../log-cursor.ts';
import { iso } from '../schemas/common.ts';
import { type PredicateBody, predicateDefOf } from '../schemas/registry.ts';
import { type RecallBody, type StatementBody, toRecallQuery, toStatement, writeContext } from '../statements.ts';
import { beliefJson, eventJson, predicateJson, rememberJson } from '../wire.ts';

/** What the calls use: the same objects for HTTP and MCP. */
export interface MemoryCallDeps {
  engine: MemoryEngine;
  reader: MemoryReader;
  registries: RegistryBook;
  /** Called with the number of events appended (metrics). */
  onAppend?: (n: number) => void;
}

/** A call's optional namespace (default: the key's own). */
interface InNamespace {
  namespace?: string;
}

/**
 * The tenant whose registry a call reads or replaces. One rule for HTTP and MCP: a named namespace follows
 * `resolveNamespace` (an agent key naming another agent's namespace -> 403 `namespace_mismatch`, as for
 * facts); a named tenant must be one the key reaches (an agent key: its own); else the key's own tenant.
 * @throws {TetherError} 400 when the `*` admin names no tenant; 403 `namespace_mismatch`.
 */
export function registryTenant(auth: AuthContext, named: { tenant?: string; namespace?: string }): string {
  if (named.namespace !== undefined) return tenantOf(resolveNamespace(auth, named.namespace));
  if (named.tenant === undefined) {
    if (auth.tenant === '*') throw invalidRequest('tenant', "an admin key of '*' must name a tenant");
    return auth.tenant;
  }
  const ok = auth.namespace !== null ? named.tenant === auth.tenant : reachesTenant(auth, named.tenant);
  if (!ok) throw namespaceMismatch(auth.namespace ?? `${auth.tenant}:*`, named.tenant);
  return named.tenant;
}

/** The memory calls over `deps`. */
export function memoryCalls(deps: MemoryCallDeps) {
  const { engine, reader, registries } = deps;
  return {
    /** One statement -> its result; a batch (`statements`) -> `{results}` in order. */
    async remember(auth: AuthContext, body: (StatementBody | { statements: StatementBody[] }) & InNamespace) {
      const ctx = writeContext(auth, resolveNamespace(auth, body.namespace));
      if ('statements' in body) {
        const results = await engine.remember(ctx, body.statements.map(toStatement), 'statements');
        deps.onAppend?.(results.filter((r) => r.stored).length);
        // A turn of the event loop every few ms: a batch has up to 1,000 results.
        const slice = new TimeSlice(auth.lane);
        const answer: ReturnType<typeof rememberJson>[] = [];
        for (const r of results) {
          answer.push(rememberJson(r));
          if (slice.due()) await slice.yield();
        }
        return { results: answer };
      }
      const [result] = await engine.remember(ctx, [toStatement(body)]);
      if (result?.stored) deps.onAppend?.(1);
      return rememberJson(result!);
    },

    /** Current (or `as_of`) beliefs by subject/predicate, or a text search with `q`. */
    async recall(auth: AuthContext, q: RecallBody & InNamespace) {
      const beliefs = await reader.recall({
        ...toRecallQuery(resolveNamespace(auth, q.namespace), q),
        lane: auth.lane,
      });
      return { beliefs: beliefs.map(beliefJson) };
    },

    /**
     * `recall`'s answer as finished JSON bytes, built off the event loop (`MemoryReader.recallText`);
     * null when that is not possible or not worth it: then call `recall`.
     */
    async recallText(auth: AuthContext, q: RecallBody & InNamespace) {
      return reader.recallText(toRecallQuery(resolveNamespace(auth, q.namespace), q));
    },

    /** One page (`limit`, default 100) of the events of one subject/predicate, oldest first, and the next page's cursor. */
    async history(
      auth: AuthContext,
      q: { subject: string; predicate: string; limit?: number; cursor?: string } & InNamespace,
    ) {
      const namespace = resolveNamespace(auth, q.namespace);
      const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      const page = await reader.history(namespace, q, { limit: q.limit, after });
      return { events: page.events.map(eventJson), next: page.next && encodeCursor(page.next) };
    },

    /** `history`'s answer as finished JSON bytes, built off the event loop; null when not possible: call `history`. */
    async historyText(
      auth: AuthContext,
      q: { subject: string; predicate: string; limit?: number; cursor?: string } & InNamespace,
    ) {
      const namespace = resolveNamespace(auth, q.namespace);
      const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      return reader.historyText(namespace, q, { limit: q.limit, after });
    },

    /** Retracts one value, or all values when `value` is absent. */
    async forget(
      auth: AuthContext,
      b: { subject: string; predicate: string; value?: string | number | boolean } & InNamespace,
    ) {
      const ctx = writeContext(auth, resolveNamespace(auth, b.namespace));
      const r = await engine.forget(ctx, { subject: b.subject, predicate: b.predicate, value: b.value });
      if (r.event) deps.onAppend?.(1);
      return { withdrawn: r.withdrawn };
    },

    /** The predicates in force for a tenant (see `registryTenant` for which one). */
    async registry(auth: AuthContext, named: { tenant?: string; namespace?: string }) {
      const tenant = registryTenant(auth, named);
      const registry = await registries.current(tenant);
      return { tenant, predicates: registry.predicates.map(predicateJson) };
    },

    /** Admin: replaces a tenant's predicates, recorded as a new version from now on. */
    async replaceRegistry(auth: AuthContext, body: { tenant?: string; predicates: PredicateBody[] }) {
      requireAdmin(auth);
      const tenant = registryTenant(auth, { tenant: body.tenant });
      const version = await registries.replace(tenant, body.predicates.map(predicateDefOf));
      const registry = await registries.current(tenant);
      return {
        tenant,
        version: { id: version.id, recorded_at: iso(version.recordedAt) as string },
        predicates: registry.predicates.map(predicateJson),
      };
    },
  };
}

/** The memory calls, as `memoryCalls` builds them. */
export type MemoryCalls = ReturnType<typeof memoryCalls>;
