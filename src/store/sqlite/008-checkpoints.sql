-- Tether SQLite schema, version 8: LangGraph checkpoints and their pending writes, resume records of
-- a namespace (src/store/checkpoint-types.ts). Values are the saver's serialised bytes in base64.
CREATE TABLE checkpoints (
  namespace TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  parent_checkpoint_id TEXT,
  type TEXT NOT NULL,
  checkpoint TEXT NOT NULL,
  metadata_type TEXT NOT NULL,
  metadata TEXT NOT NULL,
  at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE checkpoint_writes (
  namespace TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  checkpoint_ns TEXT NOT NULL,
  checkpoint_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  channel TEXT NOT NULL,
  type TEXT NOT NULL,
  value TEXT NOT NULL,
  task_path TEXT NOT NULL,
  at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
