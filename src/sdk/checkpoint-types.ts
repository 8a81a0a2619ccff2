/**
 * @module
 * Wire types of the checkpoint routes (`/v1/checkpoints…`) as the SDK sends and reads them: the
 * LangGraph saver's records, values serialised by its serde and carried as base64.
 */

/** A serialised value: the serde's type name and its bytes in base64. */
export interface SerializedJson {
  type: string;
  data: string;
}

/** Where a checkpoint lives in the agent's namespace. */
export interface CheckpointKeyJson {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
}

/** A pending write as read back. */
export interface PendingWriteJson {
  task_id: string;
  idx: number;
  channel: string;
  value: SerializedJson;
  task_path: string;
}

/** A stored checkpoint with its pending writes. */
export interface CheckpointJson extends CheckpointKeyJson {
  parent_checkpoint_id: string | null;
  checkpoint: SerializedJson;
  metadata: SerializedJson;
  pending_writes: PendingWriteJson[];
  /** ISO time of the write. */
  at: string;
}

/** A checkpoint to store. */
export interface CheckpointInput extends CheckpointKeyJson {
  parent_checkpoint_id?: string | null;
  checkpoint: SerializedJson;
  metadata: SerializedJson;
}

/** A task's pending writes against a checkpoint. */
export interface CheckpointWritesInput extends CheckpointKeyJson {
  task_id: string;
  task_path?: string;
  writes: { idx: number; channel: string; value: SerializedJson }[];
}

/** Which checkpoints to read (all optional): newest first within a thread, `limit` per page (1..100). */
export interface CheckpointQueryInput {
  namespace?: string;
  thread_id?: string;
  checkpoint_ns?: string;
  checkpoint_id?: string;
  before?: string;
  limit?: number;
  cursor?: string;
}
