/**
 * @module
 * LangGraph checkpoints as resume records: put a checkpoint, put a task's pending writes, delete a
 * thread — each one fenced store call under the namespace's lease (`ResumeStore.writeResume`), so a saver
 * whose lease was taken over stores nothing — and the reads a saver's `getTuple` / `list` need.
 * The serialised values are opaque here. Knows nothing of HTTP; `server/calls/checkpoint-calls.ts` calls it.
 */
import type { Clock } from '../../common/clock.ts';
import type {
  CheckpointKey,
  CheckpointQuery,
  CheckpointRecord,
  CheckpointWriteRecord,
} from '../../store/checkpoint-types.ts';
import type { ResumeStore } from '../../store/resume-store.ts';
import type { ResumeWrite, ResumeWriteResult } from '../../store/resume-types.ts';
import { leaseNotHeld, refusalError } from './lease-errors.ts';
import type { WriteScope } from './records.ts';

/** A checkpoint to put (the namespace, time and epoch come from the write). */
export type CheckpointInput = Omit<CheckpointRecord, 'namespace' | 'at' | 'epoch'>;

/** A pending write to put, against the checkpoint and task named in the call. */
export type CheckpointWriteInput = Pick<CheckpointWriteRecord, 'idx' | 'channel' | 'type' | 'value'>;

/** A checkpoint with its pending writes. */
export interface CheckpointTuple {
  checkpoint: CheckpointRecord;
  writes: CheckpointWriteRecord[];
}

/** Checkpoint writes and reads over a store. */
export class CheckpointRecords {
  readonly #store: ResumeStore;
  readonly #clock: Clock;

  constructor(options: { store: ResumeStore; clock: Clock }) {
    this.#store = options.store;
    this.#clock = options.clock;
  }

  /** One fenced write. @throws {TetherError} 409 `lease_not_held` / `lease_lost`, nothing stored */
  async #write(scope: WriteScope, build: (epoch: number, now: number) => ResumeWrite): Promise<ResumeWriteResult> {
    if (scope.epoch === undefined) throw leaseNotHeld(scope.namespace);
    const fence = { namespace: scope.namespace, epoch: scope.epoch, now: this.#clock.now() };
    const got = await this.#store.writeResume(fence, [build(fence.epoch, fence.now)]);
    if (!got.ok) throw refusalError(got.reason === 'conflict' ? 'lost' : got.reason, fence, got.lease);
    return got.value[0] as ResumeWriteResult;
  }

  /** Stores a checkpoint (replacing one with the same key). */
  async put(scope: WriteScope, input: CheckpointInput): Promise<CheckpointRecord> {
    let stored: CheckpointRecord | undefined;
    await this.#write(scope, (epoch, at) => {
      stored = { ...input, namespace: scope.namespace, at, epoch };
      return { kind: 'put_checkpoint', checkpoint: stored };
    });
    return stored as CheckpointRecord;
  }

  /** Stores a task's pending writes against a checkpoint; returns how many were stored. */
  async putWrites(
    scope: WriteScope,
    target: CheckpointKey & { taskId: string; taskPath: string },
    writes: CheckpointWriteInput[],
  ): Promise<number> {
    const r = await this.#write(scope, (epoch, at) => ({
      kind: 'put_checkpoint_writes',
      namespace: scope.namespace,
      writes: writes.map((w) => ({ ...target, ...w, namespace: scope.namespace, at, epoch })),
    }));
    return (r as { stored: number }).stored;
  }

  /** Erases a thread's checkpoints and writes in every checkpoint_ns; returns the rows erased. */
  async deleteThread(scope: WriteScope, threadId: string): Promise<number> {
    const r = await this.#write(scope, () => ({ kind: 'delete_thread', namespace: scope.namespace, threadId }));
    return (r as { deleted: number }).deleted;
  }

  /** Checkpoints of a query with their pending writes, newest first within a thread. */
  async list(query: CheckpointQuery): Promise<CheckpointTuple[]> {
    const checkpoints = await this.#store.checkpoints(query);
    const writes = await this.#store.checkpointWrites(query.namespace, checkpoints);
    const byKey = new Map<string, CheckpointWriteRecord[]>();
    for (const w of writes) {
      const key = keyOf(w);
      byKey.set(key, [...(byKey.get(key) ?? []), w]);
    }
    return checkpoints.map((checkpoint) => ({ checkpoint, writes: byKey.get(keyOf(checkpoint)) ?? [] }));
  }

  /** The pending writes of one checkpoint (the saver migrates an old checkpoint's sends from its parent's). */
  writes(namespace: string, key: CheckpointKey): Promise<CheckpointWriteRecord[]> {
    return this.#store.checkpointWrites(namespace, [key]);
  }
}

function keyOf(k: CheckpointKey): string {
  return JSON.stringify([k.threadId, k.checkpointNs, k.checkpointId]);
}
