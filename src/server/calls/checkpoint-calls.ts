/**
 * @module
 * The checkpoint calls behind `/v1/checkpoints…` (the LangGraph saver's wire): tenancy
 * (`resolveNamespace`), the writer's epoch (`X-Lease-Epoch`), the engine call and the wire shape.
 * Input is parsed already (Zod).
 */
import { type AuthContext, resolveNamespace } from '../../auth/auth-context.ts';
import { invalidRequest } from '../../common/errors.ts';
import type { CheckpointRecords } from '../../memory/resume/checkpoints.ts';
import type { CheckpointKey, CheckpointRecord, CheckpointWriteRecord } from '../../store/checkpoint-types.ts';
import { iso } from '../schemas/common.ts';
import type { Epoch } from './resume-calls.ts';

/** Checkpoints per page. @default */
const DEFAULT_LIMIT = 20;

interface InNamespace {
  namespace?: string;
}

interface KeyFields {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

interface Serialized {
  type: string;
  data: string;
}

function writeJson(w: CheckpointWriteRecord) {
  return {
    task_id: w.taskId,
    idx: w.idx,
    channel: w.channel,
    value: { type: w.type, data: w.value },
    task_path: w.taskPath,
  };
}

function checkpointJson(c: CheckpointRecord, writes: CheckpointWriteRecord[]) {
  return {
    thread_id: c.threadId,
    checkpoint_ns: c.checkpointNs,
    checkpoint_id: c.checkpointId,
    parent_checkpoint_id: c.parentCheckpointId,
    checkpoint: { type: c.type, data: c.checkpoint },
    metadata: { type: c.metadataType, data: c.metadata },
    pending_writes: writes.map(writeJson),
    at: iso(c.at) as string,
  };
}

/** The page cursor: the last checkpoint's key, base64url JSON. */
function cursorOf(k: CheckpointKey): string {
  return Buffer.from(JSON.stringify([k.threadId, k.checkpointNs, k.checkpointId])).toString('base64url');
}

/** @throws {TetherError} 400 naming `cursor` when it is not one this server gave */
function parseCursor(cursor: string): CheckpointKey {
  try {
    const k = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(k) && k.length === 3 && k.every((x) => typeof x === 'string')) {
      return { threadId: k[0], checkpointNs: k[1], checkpointId: k[2] };
    }
  } catch {}
  throw invalidRequest('cursor', 'is not a cursor from a previous page');
}

const keyOf = (b: KeyFields): CheckpointKey => ({
  threadId: b.thread_id,
  checkpointNs: b.checkpoint_ns,
  checkpointId: b.checkpoint_id,
});

/** The checkpoint calls over `records`. */
export function checkpointCalls(records: CheckpointRecords) {
  const scope = (auth: AuthContext, named: string | undefined, epoch: Epoch) => ({
    namespace: resolveNamespace(auth, named),
    epoch,
  });
  return {
    async put(
      auth: AuthContext,
      epoch: Epoch,
      b: InNamespace &
        KeyFields & { parent_checkpoint_id?: string | null; checkpoint: Serialized; metadata: Serialized },
    ) {
      const c = await records.put(scope(auth, b.namespace, epoch), {
        ...keyOf(b),
        parentCheckpointId: b.parent_checkpoint_id ?? null,
        type: b.checkpoint.type,
        checkpoint: b.checkpoint.data,
        metadataType: b.metadata.type,
        metadata: b.metadata.data,
      });
      return {
        thread_id: c.threadId,
        checkpoint_ns: c.checkpointNs,
        checkpoint_id: c.checkpointId,
        at: iso(c.at) as string,
        epoch: c.epoch,
      };
    },

    async putWrites(
      auth: AuthContext,
      epoch: Epoch,
      b: InNamespace &
        KeyFields & {
          task_id: string;
          task_path?: string;
          writes: { idx: number; channel: string; value: Serialized }[];
        },
    ) {
      const stored = await records.putWrites(
        scope(auth, b.namespace, epoch),
        { ...keyOf(b), taskId: b.task_id, taskPath: b.task_path ?? '' },
        b.writes.map((w) => ({ idx: w.idx, channel: w.channel, type: w.value.type, value: w.value.data })),
      );
      return { stored };
    },

    async deleteThread(auth: AuthContext, epoch: Epoch, q: InNamespace & { thread_id: string }) {
      const deleted = await records.deleteThread(scope(auth, q.namespace, epoch), q.thread_id);
      return { thread_id: q.thread_id, deleted };
    },

    async list(
      auth: AuthContext,
      q: InNamespace & {
        thread_id?: string;
        checkpoint_ns?: string;
        checkpoint_id?: string;
        before?: string;
        limit?: number;
        cursor?: string;
      },
    ) {
      const limit = q.limit ?? DEFAULT_LIMIT;
      const tuples = await records.list({
        namespace: resolveNamespace(auth, q.namespace),
        threadId: q.thread_id,
        checkpointNs: q.checkpoint_ns,
        checkpointId: q.checkpoint_id,
        before: q.before,
        after: q.cursor === undefined ? undefined : parseCursor(q.cursor),
        limit,
      });
      const last = tuples[tuples.length - 1];
      return {
        checkpoints: tuples.map((t) => checkpointJson(t.checkpoint, t.writes)),
        next_cursor: tuples.length === limit && last ? cursorOf(last.checkpoint) : null,
      };
    },

    async writes(auth: AuthContext, q: InNamespace & KeyFields) {
      const writes = await records.writes(resolveNamespace(auth, q.namespace), keyOf(q));
      return { pending_writes: writes.map(writeJson) };
    },
  };
}

export type CheckpointCalls = ReturnType<typeof checkpointCalls>;
