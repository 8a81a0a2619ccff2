/**
 * @module
 * Request schemas of the registry routes.
 */
import { z } from 'zod';
import type { PredicateDef } from '../../store/store.ts';

/** One predicate on the wire. */
export const predicateSchema = z.strictObject({
  name: z.string().min(1).max(64),
  cardinality: z.enum(['single', 'multi']),
  value_type: z.enum(['string', 'number', 'boolean', 'enum', 'date', 'ref']),
  allowed: z.array(z.string().min(1).max(128)).max(256).optional(),
  aliases: z.array(z.string().min(1).max(64)).max(32).optional(),
  description: z.string().max(1024).optional(),
});

/** `PUT /v1/registry` body. */
export const putRegistryBody = z.strictObject({
  tenant: z.string().min(1).max(128).optional(),
  predicates: z.array(predicateSchema).max(1000),
});

/** `GET /v1/registry` query. */
export const getRegistryQuery = z.strictObject({
  tenant: z.string().min(1).max(128).optional(),
  namespace: z.string().min(3).max(257).optional(),
});

/** A predicate from the wire shape to the engine's. */
export function predicateDefOf(p: z.output<typeof predicateSchema>): PredicateDef {
  return {
    name: p.name,
    cardinality: p.cardinality,
    valueType: p.value_type,
    ...(p.allowed ? { allowed: p.allowed } : {}),
    ...(p.aliases ? { aliases: p.aliases } : {}),
    ...(p.description ? { description: p.description } : {}),
  };
}
