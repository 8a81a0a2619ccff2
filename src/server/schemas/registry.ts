/**
 * @module
 * Schemas of the registry routes and the `list_predicates` tool: requests, and the answers (OpenAPI).
 * What `GET /v1/registry` answers is what `PUT /v1/registry` accepts (nulls included), so a read,
 * modify, write round trip works.
 */
import { z } from 'zod';
import { NAME_PATTERN } from '../../auth/auth-context.ts';
import type { PredicateDef } from '../../store/registry-store.ts';
import { namespaceText } from './common.ts';

/** A tenant name (lower-case, as in keys and namespaces). */
export const tenantName = z
  .string()
  .max(128)
  .regex(NAME_PATTERN, { message: 'must be a lower-case name (a-z, 0-9, ., _, -)' });

/** One predicate on the wire. */
export const predicateSchema = z.strictObject({
  name: z.string().min(1).max(64),
  cardinality: z.enum(['single', 'multi']),
  value_type: z.enum(['string', 'number', 'boolean', 'enum', 'date', 'ref']),
  allowed: z.array(z.string().min(1).max(128)).max(256).nullish(),
  aliases: z.array(z.string().min(1).max(64)).max(32).nullish(),
  description: z.string().max(1024).nullish(),
});

/** A parsed wire predicate. */
export type PredicateBody = z.output<typeof predicateSchema>;

/** `PUT /v1/registry` body. */
export const putRegistryBody = z.strictObject({
  tenant: tenantName.optional(),
  predicates: z.array(predicateSchema).max(1000),
});

/** `GET /v1/registry` query. */
export const getRegistryQuery = z.strictObject({
  tenant: tenantName.optional(),
  namespace: namespaceText.optional(),
});

/** A predicate as answered (every field present; absent ones null or []). */
export const predicateAnswer = z.object({
  name: z.string(),
  cardinality: z.enum(['single', 'multi']),
  value_type: z.enum(['string', 'number', 'boolean', 'enum', 'date', 'ref']),
  allowed: z.array(z.string()).nullable(),
  aliases: z.array(z.string()),
  description: z.string().nullable(),
});

/** `GET /v1/registry` answer. */
export const registryAnswer = z.object({ tenant: z.string(), predicates: z.array(predicateAnswer) });

/** `PUT /v1/registry` answer. */
export const putRegistryAnswer = registryAnswer.extend({
  version: z.object({ id: z.string(), recorded_at: z.string() }),
});

/** A predicate from the wire shape to the engine's. */
export function predicateDefOf(p: PredicateBody): PredicateDef {
  return {
    name: p.name,
    cardinality: p.cardinality,
    valueType: p.value_type,
    ...(p.allowed ? { allowed: p.allowed } : {}),
    ...(p.aliases ? { aliases: p.aliases } : {}),
    ...(p.description ? { description: p.description } : {}),
  };
}
