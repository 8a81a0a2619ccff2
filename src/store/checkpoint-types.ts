/**
 * @module
 * LangGraph checkpoints as resume records of an agent namespace: one (thread_id, checkpoint_ns)
 * space per namespace, each checkpoint and each pending write stored as the saver serialised it
 * (a serde type and base64 bytes: the server never looks inside). Plain data; the fenced writes are
 * `ResumeWrite` kinds (`resume-types.ts`), the reads are `CheckpointReads`. Times are epoch ms.
 */

/** Where a checkpoint lives inside a namespace. */
export interface CheckpointKey {
  threadId: string;
  /** '' is the root graph; a subgraph's namespace otherwise. */
  checkpointNs: string;
  checkpointId: string;
}

/** One stored checkpoint. */
export interface CheckpointRecord extends CheckpointKey {
  namespace: string;
  /** The checkpoint this one was made from, or null for a thread's first. */
  parentCheckpointId: string | null;
  /** Serde type of `checkpoint` (e.g. `json`). */
  type: string;
  /** The serialised checkpoint, base64. */
  checkpoint: string;
  /** Serde type of `metadata`. */
  metadataType: string;
  /** The serialised metadata, base64. */
  metadata: string;
  /** Epoch ms of the write. */
  at: number;
  /** Lease epoch of the writer. */
  epoch: number;
}

/** One pending write of a task against a checkpoint. */
export interface CheckpointWriteRecord extends CheckpointKey {
  namespace: string;
  taskId: string;
  /**
   * The write's index in its `putWrites` call; special channels (error, interrupt, scheduled,
   * resume) have fixed negative indexes, and a later write there replaces the earlier one, while a
   * repeated (task, idx >= 0) keeps the first.
   */
  idx: number;
  channel: string;
  /** Serde type of `value`. */
  type: string;
  /** The serialised value, base64. */
  value: string;
  /** The task's path, '' when none: pending writes are returned ordered by (taskPath, taskId, idx). */
  taskPath: string;
  at: number;
  epoch: number;
}

/** Which checkpoints to read, newest first (by thread_id, checkpoint_ns, then checkpoint_id descending). */
export interface CheckpointQuery {
  namespace: string;
  threadId?: string;
  checkpointNs?: string;
  checkpointId?: string;
  /** Only checkpoint ids below this one. */
  before?: string;
  /** Only those after this key in the order above (the last one of the previous page). */
  after?: CheckpointKey;
  limit: number;
}

/** The checkpoint reads a `Store` serves. */
export interface CheckpointReads {
  /** Checkpoints matching `query`, in its order. */
  checkpoints(query: CheckpointQuery): Promise<CheckpointRecord[]>;
  /** The pending writes of each checkpoint named, in no particular order. */
  checkpointWrites(namespace: string, keys: CheckpointKey[]): Promise<CheckpointWriteRecord[]>;
}
