/**
 * @module
 * Resume records in an export and an import: one NDJSON line each, `{"resume_record": {"kind", ...}}`
 * with the record's fields in snake_case (times in epoch ms, as stored). Checked whole at import,
 * like event lines. Leases are not exported: they are live state, not history.
 */
import { z } from 'zod';
import { MAX_RECORD_SEQ, MAX_STEP } from '../../memory/resume/record-check.ts';
import type { ResumeRecordLine } from '../../store/resume-types.ts';
import { channelName, checkpointId, checkpointNs, serialized, taskId, taskPath, threadId } from './checkpoints.ts';
import { namespaceText } from './common.ts';
import { pointerBody, pointerName, pointerTypeSchema, roleSchema } from './resume.ts';

// The ranges a write can produce (`memory/resume/record-check.ts` checks what needs the clock and the
// turn limit): an imported seq or version of 2^53-1 made the next write's 2^53 collide or conflict.
const ms = z.number().int().min(0).max(8.64e15);
const seq = z
  .number()
  .int()
  .min(1)
  .max(MAX_RECORD_SEQ, { message: `must be at most ${MAX_RECORD_SEQ}` });
const epoch = z
  .number()
  .int()
  .min(1)
  .max(MAX_RECORD_SEQ, { message: `must be at most ${MAX_RECORD_SEQ}` });
const str = (max: number) => z.string().max(max, { message: `must be at most ${max} characters` });
/** Non-empty, as a write requires. */
const named = (max: number) => z.string().min(1, { message: 'must not be empty' }).max(max);

const outputRef = z.string().regex(/^out_[0-9a-f]{26}$/, { message: 'is not an output ref' });

const stateFields = {
  goal: str(2000).nullable(),
  plan: z.array(str(1000)).max(100),
  progress: str(4000).nullable(),
  focus: str(2000).nullable(),
  decisions: z.array(str(2000)).max(200),
  open_questions: z.array(str(2000)).max(100),
  notes: str(20_000).nullable(),
  step: z.number().int().min(0).max(MAX_STEP).nullable(),
  last_milestone: str(256).nullable(),
};

/** One resume record line's `resume_record`. */
export const resumeRecordLine = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('working_state'),
    namespace: namespaceText,
    version: seq,
    ...stateFields,
    updated_at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('milestone'),
    namespace: namespaceText,
    seq,
    name: named(256),
    progress: str(4000).nullable(),
    at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('turn'),
    namespace: namespaceText,
    seq,
    role: roleSchema,
    content: z.string().min(1, { message: 'must not be empty' }),
    name: named(128).nullable(),
    message_id: named(256).nullable(),
    brief: str(1000).nullable(),
    output_ref: outputRef.nullable(),
    at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('output'),
    namespace: namespaceText,
    ref: outputRef,
    content: z.string().min(1, { message: 'must not be empty' }),
    tool: named(128).nullable(),
    summary: str(2000).nullable(),
    bytes: z.number().int().min(0),
    at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('pointer'),
    namespace: namespaceText,
    name: pointerName,
    type: pointerTypeSchema,
    fields: pointerBody.shape.fields,
    note: str(1000).nullable(),
    updated_at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('checkpoint'),
    namespace: namespaceText,
    thread_id: threadId,
    checkpoint_ns: checkpointNs,
    checkpoint_id: checkpointId,
    parent_checkpoint_id: checkpointId.nullable(),
    type: serialized.shape.type,
    checkpoint: serialized.shape.data,
    metadata_type: serialized.shape.type,
    metadata: serialized.shape.data,
    at: ms,
    epoch,
  }),
  z.strictObject({
    kind: z.literal('checkpoint_write'),
    namespace: namespaceText,
    thread_id: threadId,
    checkpoint_ns: checkpointNs,
    checkpoint_id: checkpointId,
    // The write route's key texts: no NUL, which PostgreSQL text cannot hold (a 500 at import).
    task_id: taskId,
    idx: z.number().int().min(-100).max(1_000_000),
    channel: channelName,
    type: serialized.shape.type,
    value: serialized.shape.data,
    task_path: taskPath,
    at: ms,
    epoch,
  }),
]);

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (k: string) => k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The export line of a record. */
export function resumeRecordJson(line: ResumeRecordLine): { resume_record: Record<string, unknown> } {
  const out: Record<string, unknown> = { kind: line.kind };
  for (const [k, v] of Object.entries(line.record)) out[snake(k)] = v;
  return { resume_record: out };
}

/** The record of a parsed import line. */
export function resumeRecordOf(parsed: z.output<typeof resumeRecordLine>): ResumeRecordLine {
  const { kind, ...fields } = parsed;
  const record: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) record[camel(k)] = v;
  return { kind, record } as unknown as ResumeRecordLine;
}
