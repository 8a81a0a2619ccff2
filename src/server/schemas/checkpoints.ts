/**
 * @module
 * Request and answer schemas of the checkpoint routes (`/v1/checkpoints…`), the LangGraph saver's
 * wire: keys as text, serialised values as `{type, data}` with `data` in base64 (the server stores it
 * as it came). One definition for validation (400 naming the field) and OpenAPI.
 */
import { z } from 'zod';
import { namespaceText, queryInt } from './common.ts';

/** Largest serialised checkpoint or pending-write value, bytes (the base64 is 4/3 of it). */
export const MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024;
/** Body limit of a checkpoint put or a writes put, bytes. */
export const CHECKPOINT_BODY_LIMIT = 8 * 1024 * 1024;

/** Key text: no NUL (PostgreSQL text cannot hold one), at most `max` characters. */
const keyText = (min: number, max: number) =>
  z
    .string()
    .min(min, { message: min === 0 ? 'must be text' : 'must not be empty' })
    .max(max, { message: `must be at most ${max} characters` })
    .refine((s) => !s.includes('\u0000'), { message: 'must not contain NUL' });

export const threadId = keyText(1, 512);
export const checkpointNs = keyText(0, 2048);
export const checkpointId = keyText(1, 256);
export const taskId = keyText(1, 256);
export const taskPath = keyText(0, 2048);
export const channelName = keyText(1, 512);

/** A serialised value. */
export const serialized = z.strictObject({
  type: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { message: 'must be a serde type name' }),
  data: z
    .string()
    .max(Math.ceil(MAX_CHECKPOINT_BYTES / 3) * 4, { message: `must decode to at most ${MAX_CHECKPOINT_BYTES} bytes` })
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, { message: 'must be base64' }),
});

/** `PUT /v1/checkpoints`. */
export const checkpointBody = z.strictObject({
  namespace: namespaceText.optional(),
  thread_id: threadId,
  checkpoint_ns: checkpointNs,
  checkpoint_id: checkpointId,
  parent_checkpoint_id: checkpointId.nullable().optional(),
  checkpoint: serialized,
  metadata: serialized,
});

/** `POST /v1/checkpoints/writes`. */
export const checkpointWritesBody = z.strictObject({
  namespace: namespaceText.optional(),
  thread_id: threadId,
  checkpoint_ns: checkpointNs,
  checkpoint_id: checkpointId,
  task_id: taskId,
  task_path: taskPath.optional(),
  writes: z
    .array(
      z.strictObject({
        idx: z.number().int().min(-100).max(1_000_000),
        channel: channelName,
        value: serialized,
      }),
    )
    .max(10_000, { message: 'must have at most 10000 writes' }),
});

/** `GET /v1/checkpoints`. */
export const checkpointsQuery = z.strictObject({
  namespace: namespaceText.optional(),
  thread_id: threadId.optional(),
  checkpoint_ns: checkpointNs.optional(),
  checkpoint_id: checkpointId.optional(),
  before: checkpointId.optional().describe('Only checkpoint ids below this one'),
  limit: queryInt(1, 100).optional().describe('@default 20'),
  cursor: z.string().max(4000).optional().describe('next_cursor of the previous page'),
});

/** `GET /v1/checkpoints/writes`: the pending writes of one checkpoint. */
export const checkpointWritesQuery = z.strictObject({
  namespace: namespaceText.optional(),
  thread_id: threadId,
  checkpoint_ns: checkpointNs,
  checkpoint_id: checkpointId,
});

/** `DELETE /v1/checkpoints`: a whole thread. */
export const deleteThreadQuery = z.strictObject({ namespace: namespaceText.optional(), thread_id: threadId });

const pendingWrite = z.object({
  task_id: z.string(),
  idx: z.number().int(),
  channel: z.string(),
  value: serialized,
  task_path: z.string(),
});

const checkpointAnswer = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  parent_checkpoint_id: z.string().nullable(),
  checkpoint: serialized,
  metadata: serialized,
  pending_writes: z.array(pendingWrite),
  at: z.string(),
});

export const checkpointsAnswer = z.object({
  checkpoints: z.array(checkpointAnswer),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
});

export const pendingWritesAnswer = z.object({ pending_writes: z.array(pendingWrite) });

export const putCheckpointAnswer = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.string(),
  checkpoint_id: z.string(),
  at: z.string(),
  epoch: z.number().int(),
});

export const putWritesAnswer = z.object({ stored: z.number().int() });

export const deleteThreadAnswer = z.object({ thread_id: z.string(), deleted: z.number().int() });
