/**
 * @module
 * Request schemas of the memory routes (remember, recall, history, forget); reused by OpenAPI.
 */
import { z } from 'zod';
import { instant, namespaceText, queryInstant, queryInt } from './common.ts';

/** A JSON value: the predicate's type is checked by the engine, which names the predicate. */
const jsonValue = z.union([z.string(), z.number(), z.boolean()], {
  message: 'must be a string, number or boolean',
});

/** One statement. */
export const statementSchema = z.strictObject({
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
  value: jsonValue,
  kind: z.string().min(1).max(64).nullish(),
  confidence: z.number().min(0).max(1).optional(),
  source: z.string().max(256).nullish(),
  observed_at: instant.optional(),
  evidence: z.string().max(8192).nullish(),
});

/** `POST /v1/memories` with one statement. */
export const rememberOneBody = statementSchema.extend({ namespace: namespaceText.optional() });

/** `POST /v1/memories` with a batch. */
export const rememberBatchBody = z.strictObject({
  namespace: namespaceText.optional(),
  statements: z.array(statementSchema).min(1).max(1000),
});

/** `GET /v1/memories` query. */
export const recallQuery = z.strictObject({
  namespace: namespaceText.optional(),
  subject: z.string().min(1).max(256).optional(),
  predicate: z.string().min(1).max(64).optional(),
  q: z.string().min(1).max(512).optional(),
  as_of: queryInstant.optional(),
  limit: queryInt(1, 1000).optional(),
  min_confidence: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, { message: 'must be a number from 0 to 1' })
    .transform(Number)
    .optional(),
  kind: z.string().min(1).max(64).optional(),
});

/** `GET /v1/memories/history` query. */
export const historyQuery = z.strictObject({
  namespace: namespaceText.optional(),
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
});

/** `POST /v1/memories/forget` body. */
export const forgetBody = z.strictObject({
  namespace: namespaceText.optional(),
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
  value: jsonValue.optional(),
});
