/**
 * @module
 * Request and answer schemas of the resume routes (working state, milestones, turns, outputs,
 * pointers, resume, lease): one definition for validation (400 naming the field), the MCP resume
 * tools, and OpenAPI. Lengths and ranges are stated here and in docs/resume.md.
 */
import { z } from 'zod';
import { MAX_TTL_MS, MIN_TTL_MS } from '../../memory/resume/leases.ts';
import { MAX_BUDGET, MIN_BUDGET } from '../../memory/resume/resume.ts';
import { namespaceText, queryInt } from './common.ts';

const text = (max: number) => z.string().max(max, { message: `must be at most ${max} characters` });
const list = (items: number, max: number) =>
  z.array(text(max)).max(items, { message: `must have at most ${items} items` });

/** A lease epoch: an integer >= 1. */
export const epochSchema = z
  .number({ message: 'must be an integer lease epoch' })
  .int({ message: 'must be an integer lease epoch' })
  .min(1, { message: 'must be an integer lease epoch (>= 1)' });

/** The fencing header of resume writes (other headers pass). */
export const epochHeaders = z.looseObject({
  'x-lease-epoch': z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, { message: 'must be an integer lease epoch (>= 1)' })
    .optional()
    .describe('The lease epoch from acquire or resume'),
});

/** A lease TTL in ms, with the range in the message. */
export const ttlSchema = z
  .number({ message: `must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} (ms)` })
  .int({ message: `must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} (ms)` })
  .min(MIN_TTL_MS, { message: `must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} (ms)` })
  .max(MAX_TTL_MS, { message: `must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} (ms)` });

/** A lease holder name. */
const holderSchema = z.string().min(1).max(200);

/** `PATCH /v1/working-state`: any of the known fields (null clears a text field). */
export const workingStatePatch = z.strictObject({
  namespace: namespaceText.optional(),
  goal: text(2000).nullable().optional(),
  plan: list(100, 1000).optional(),
  progress: text(4000).nullable().optional(),
  focus: text(2000).nullable().optional(),
  decisions: list(200, 2000).optional(),
  open_questions: list(100, 2000).optional(),
  notes: text(20_000).nullable().optional(),
  step: z.number().int().min(0).max(1e9).nullable().optional(),
  last_milestone: text(256).nullable().optional(),
});

/** `GET /v1/working-state` and other namespace-only queries. */
export const namespaceQuery = z.strictObject({ namespace: namespaceText.optional() });

/** `GET /v1/working-state/history`. */
export const stateHistoryQuery = z.strictObject({
  namespace: namespaceText.optional(),
  limit: queryInt(1, 100).optional(),
  before_version: queryInt(1, Number.MAX_SAFE_INTEGER).optional(),
});

/** `POST /v1/milestones`. */
export const milestoneBody = z.strictObject({
  namespace: namespaceText.optional(),
  name: z.string().min(1).max(256),
  progress: text(4000).optional(),
});

/** Turn roles. */
export const roleSchema = z.enum(['system', 'user', 'assistant', 'tool']);

/** `POST /v1/turns` (content above 1 MiB: 413; above the token limit: stored as an output). */
export const turnBody = z.strictObject({
  namespace: namespaceText.optional(),
  role: roleSchema,
  content: z.string().min(1),
  name: z.string().min(1).max(128).optional(),
  message_id: z.string().min(1).max(256).optional(),
  brief: text(1000).optional(),
});

/** `GET /v1/turns`. */
export const turnsQuery = z.strictObject({
  namespace: namespaceText.optional(),
  limit: queryInt(1, 1000).optional(),
  before_seq: queryInt(1, Number.MAX_SAFE_INTEGER).optional(),
});

/** `POST /v1/outputs` (content above 1 MiB: 413). */
export const outputBody = z.strictObject({
  namespace: namespaceText.optional(),
  content: z.string().min(1),
  tool: z.string().min(1).max(128).optional(),
  summary: text(2000).optional(),
});

/** `GET /v1/outputs`: a page of `limit` (default 100), newest first; `before` is the last page's `next`. */
export const outputsQuery = z.strictObject({
  namespace: namespaceText.optional(),
  limit: queryInt(1, 1000).optional(),
  before: z
    .string()
    .regex(/^out_[0-9a-f]{26}$/, { message: 'is not an output ref' })
    .optional(),
});

/** `GET /v1/milestones`: the newest `limit` (default 100) below `before_seq`, oldest first. */
export const milestonesQuery = z.strictObject({
  namespace: namespaceText.optional(),
  limit: queryInt(1, 1000).optional(),
  before_seq: queryInt(1, Number.MAX_SAFE_INTEGER).optional(),
});

/** `/v1/outputs/{ref}`. */
export const outputParams = z.strictObject({
  ref: z.string().regex(/^out_[0-9a-f]{26}$/, { message: 'is not an output ref' }),
});

/** Pointer kinds. */
export const pointerTypeSchema = z.enum(['git_ref', 'object', 'env', 'external', 'process']);

/** A pointer name (path segment). */
export const pointerName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, { message: 'must be 1-128 letters, digits, dots, dashes or underscores' });

/** `/v1/pointers/{name}`. */
export const pointerParams = z.strictObject({ name: pointerName });

/** `GET /v1/pointers`: the first `limit` (default 100) by name after `after`. */
export const pointersQuery = z.strictObject({
  namespace: namespaceText.optional(),
  limit: queryInt(1, 1000).optional(),
  after: pointerName.optional(),
});

/** `PUT /v1/pointers/{name}`. */
export const pointerBody = z.strictObject({
  namespace: namespaceText.optional(),
  type: pointerTypeSchema,
  fields: z
    .record(z.string().min(1).max(128), text(2048))
    .refine((f) => Object.keys(f).length <= 32, { message: 'must have at most 32 fields' }),
  note: text(1000).optional(),
});

/** `POST /v1/resume`. */
export const resumeBody = z.strictObject({
  namespace: namespaceText.optional(),
  token_budget: z
    .number()
    .int()
    .min(MIN_BUDGET, { message: `must be an integer from ${MIN_BUDGET} to ${MAX_BUDGET}` })
    .max(MAX_BUDGET, { message: `must be an integer from ${MIN_BUDGET} to ${MAX_BUDGET}` })
    .optional(),
  lease_ttl_ms: ttlSchema.optional(),
  holder: holderSchema.optional(),
  defer: z.boolean().optional(),
});

/** `POST /v1/lease/acquire`. */
export const acquireBody = z.strictObject({
  namespace: namespaceText.optional(),
  holder: holderSchema.optional(),
  ttl_ms: ttlSchema.optional(),
});

/** `POST /v1/lease/renew`. */
export const renewBody = z.strictObject({
  namespace: namespaceText.optional(),
  epoch: epochSchema,
  ttl_ms: ttlSchema.optional(),
});

/** `POST /v1/lease/release`. */
export const releaseBody = z.strictObject({ namespace: namespaceText.optional(), epoch: epochSchema });

// Answers (OpenAPI documentation of what the calls send).

const time = z.string().describe('ISO 8601');

export const leaseAnswer = z.object({
  namespace: z.string(),
  held: z.boolean().describe('live now (GET /v1/lease also shows the latest lapsed or released lease, held: false)'),
  holder: z.string().nullable(),
  epoch: z.number().int().nullable(),
  acquired_at: time.nullable(),
  expires_at: time.nullable(),
  ttl_ms: z.number().int().nullable().describe('what a renew without ttl_ms extends the lease by'),
});

export const workingStateAnswer = z.object({
  namespace: z.string(),
  goal: z.string().nullable(),
  plan: z.array(z.string()),
  progress: z.string().nullable(),
  focus: z.string().nullable(),
  decisions: z.array(z.string()),
  open_questions: z.array(z.string()),
  notes: z.string().nullable(),
  step: z.number().nullable(),
  last_milestone: z.string().nullable(),
  version: z.number().int().describe('0 before the first write'),
  updated_at: time.nullable(),
});

export const stateHistoryAnswer = z.object({
  versions: z.array(workingStateAnswer),
  next: z.number().int().nullable().describe('before_version of the next page; null: no more'),
});

const milestoneJson = z.object({ seq: z.number().int(), name: z.string(), progress: z.string().nullable(), at: time });

export const milestoneAnswer = z.object({ milestone: milestoneJson, working_state: workingStateAnswer });
/** `next`: the cursor of the following page (`before_seq`, `before`, `after`…), null on the last. */
const next = <T extends z.ZodType>(cursor: T) => cursor.nullable().describe('cursor of the next page; null: no more');

export const milestonesAnswer = z.object({ milestones: z.array(milestoneJson), next: next(z.number().int()) });

export const turnAnswer = z.object({
  seq: z.number().int(),
  role: roleSchema,
  content: z.string(),
  name: z.string().nullable(),
  message_id: z.string().nullable(),
  brief: z.string().nullable(),
  output_ref: z.string().nullable(),
  at: time,
  epoch: z.number().int(),
});

export const recordTurnAnswer = z.object({
  seq: z.number().int(),
  duplicate: z.boolean().describe('the message_id was stored already; nothing new was stored'),
  output_ref: z.string().nullable(),
});

export const turnsAnswer = z.object({
  turns: z.array(turnAnswer),
  total: z.number().int(),
  next: next(z.number().int()),
});

export const outputInfoAnswer = z.object({
  ref: z.string(),
  tool: z.string().nullable(),
  summary: z.string().nullable(),
  bytes: z.number().int(),
  at: time,
});

export const outputAnswer = outputInfoAnswer.extend({ content: z.string() });
export const outputsAnswer = z.object({ outputs: z.array(outputInfoAnswer), next: next(z.string()) });

export const pointerAnswer = z.object({
  name: z.string(),
  type: pointerTypeSchema,
  fields: z.record(z.string(), z.string()),
  note: z.string().nullable(),
  updated_at: time,
});

export const pointersAnswer = z.object({ pointers: z.array(pointerAnswer), next: next(z.string()) });

export const resumeAnswer = z.object({
  agent: z.string(),
  namespace: z.string(),
  fresh: z.boolean(),
  epoch: z.number().int().nullable().describe('the lease taken; null with defer'),
  lease: leaseAnswer,
  working_state: workingStateAnswer,
  pointers: z.array(pointerAnswer),
  recent_turns: z.array(turnAnswer),
  outputs: z.array(outputInfoAnswer),
  memories: z.array(z.record(z.string(), z.unknown())),
  omitted: z.object({ turns: z.number().int(), memories: z.number().int(), outputs: z.number().int() }),
  tokens: z.number().int(),
  briefing: z.string(),
});
