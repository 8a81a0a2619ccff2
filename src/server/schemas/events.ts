/**
 * @module
 * Schemas of export/import lines and purge.
 */
import { z } from 'zod';
import { instant } from './common.ts';
import { predicateSchema } from './registry.ts';

/** `GET /v1/events` query. */
export const exportQuery = z.strictObject({
  namespace: z.string().min(3).max(257).optional(),
  since: z
    .string()
    .regex(/^ev_[0-9a-f]{26}$/, { message: 'must be an event id' })
    .optional(),
});

/** One exported event line. */
export const eventLine = z.strictObject({
  id: z.string().regex(/^ev_[0-9a-f]{26}$/, { message: 'must be an event id' }),
  namespace: z.string().min(3).max(257),
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
  value: z.union([z.string().max(8192), z.number(), z.boolean(), z.null()]),
  value_key: z.string().max(8192).nullable(),
  retraction: z.boolean(),
  kind: z.string().min(1, { message: 'must not be empty: a write stores no kind as null' }).max(64).nullable(),
  confidence: z.number().min(0).max(1),
  source: z.string().max(256).nullable(),
  evidence: z.string().max(8192).nullable(),
  observed_at: instant,
  recorded_at: instant,
  actor: z.strictObject({
    tenant: z.string().max(128),
    agent: z.string().max(128).nullable(),
    session: z.string().max(256).nullable(),
    key_id: z.string().max(64).nullable(),
  }),
});

/** `DELETE /v1/namespaces/{ns}` params. */
export const namespaceParams = z.strictObject({ ns: z.string().min(3).max(257) });

/** A predicate as an export writes it (`allowed` and `description` may be null). */
const exportedPredicate = predicateSchema.extend({
  allowed: z.array(z.string().min(1).max(128)).max(256).nullish(),
  description: z.string().max(1024).nullish(),
});

/** One exported registry version line: the rules of a tenant from `recorded_at` on. */
export const registryLine = z.strictObject({
  registry_version: z.strictObject({
    id: z.string().regex(/^ev_[0-9a-f]{26}$/, { message: 'must be a registry version id' }),
    tenant: z.string().min(1).max(128),
    recorded_at: instant,
    predicates: z.array(exportedPredicate).max(1000),
  }),
});

/** `POST /v1/events/import` body: NDJSON, the lines of an export (registry versions and events). */
export const importBody = z
  .string({ message: 'send NDJSON (one event per line) with Content-Type: application/x-ndjson' })
  .describe('NDJSON: one event per line, as GET /v1/events exports them');

/** `POST /v1/events/import` answer: events stored, events already present (same id) skipped, registry versions stored. */
export const importAnswer = z.object({
  imported: z.number().int(),
  skipped: z.number().int(),
  registry_versions: z.number().int(),
  resume_records: z.number().int().describe('resume records stored (repeats skipped)'),
});

/** `DELETE /v1/namespaces/{ns}` answer. */
export const purgeAnswer = z.object({ namespace: z.string(), erased: z.number().int() });

/** `GET /v1/events` answer: NDJSON, one event line (the history shape) per line. */
export const exportAnswer = z.string().describe('NDJSON: one event per line, the shape of history events');
