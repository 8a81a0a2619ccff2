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
  // Any plain or exponent decimal (what JSON and String(number) write, e.g. 1e-7), then the range.
  min_confidence: z
    .string()
    .regex(/^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/, { message: 'must be a number from 0 to 1' })
    .transform(Number)
    .refine((n) => n >= 0 && n <= 1, { message: 'must be a number from 0 to 1' })
    .optional(),
  kind: z.string().min(1).max(64).optional(),
});

/** `GET /v1/memories/history` query: one page of at most `limit` events (default 100), from `cursor`. */
export const historyQuery = z.strictObject({
  namespace: namespaceText.optional(),
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
  limit: queryInt(1, 1000).optional(),
  /** The `next` of the page before. */
  cursor: z.string().min(1).max(200).optional(),
});

/** `POST /v1/memories/forget` body. */
export const forgetBody = z.strictObject({
  namespace: namespaceText.optional(),
  subject: z.string().min(1).max(256),
  predicate: z.string().min(1).max(64),
  value: jsonValue.optional(),
});

/** `POST /v1/memories` body: one statement, or a batch under `statements` (validated whole before any write). */
export const rememberBody = z.union([rememberOneBody, rememberBatchBody]);

/** A long batch is checked a statement at a time (`sliced-body.ts`): the body with its statements unchecked. */
export const rememberSliced = {
  key: 'statements',
  item: statementSchema,
  envelope: rememberBatchBody.extend({ statements: z.array(z.unknown()).min(1).max(1000) }),
};

const storedValue = z.union([z.string(), z.number(), z.boolean()]);

/** One event as history and export answer it ("which pod did the work" is `actor.session`). */
export const eventAnswer = z.object({
  id: z.string(),
  namespace: z.string(),
  subject: z.string(),
  predicate: z.string(),
  value: storedValue.nullable(),
  value_key: z.string().nullable(),
  retraction: z.boolean(),
  kind: z.string().nullable(),
  confidence: z.number(),
  source: z.string().nullable(),
  evidence: z.string().nullable(),
  observed_at: z.string(),
  recorded_at: z.string(),
  actor: z.object({
    tenant: z.string(),
    agent: z.string().nullable(),
    session: z.string().nullable(),
    key_id: z.string().nullable(),
  }),
});

/** One current belief; `replaced` lists at most 10 values it replaced, newest first. */
export const beliefAnswer = z.object({
  subject: z.string(),
  predicate: z.string(),
  value: storedValue,
  kind: z.string().nullable(),
  confidence: z.number(),
  source: z.string().nullable(),
  observed_at: z.string(),
  event_id: z.string(),
  replaced: z.array(z.object({ value: storedValue, observed_at: z.string() })),
});

/** What one remembered statement did. */
export const rememberResultAnswer = z.object({
  stored: z.boolean(),
  already_known: z.boolean(),
  superseded: z.array(storedValue),
  event: eventAnswer.nullable(),
});

/** `POST /v1/memories` answer: one result, or `{results}` for a batch. */
export const rememberAnswer = z.union([rememberResultAnswer, z.object({ results: z.array(rememberResultAnswer) })]);

/** `GET /v1/memories` answer. */
export const recallAnswer = z.object({ beliefs: z.array(beliefAnswer) });

/** `GET /v1/memories/history` answer: a page, and `next` (the cursor of the page after; null at the end). */
export const historyAnswer = z.object({ events: z.array(eventAnswer), next: z.string().nullable() });

/** `POST /v1/memories/forget` answer. */
export const forgetAnswer = z.object({ withdrawn: z.number().int() });
