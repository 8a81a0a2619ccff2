-- Tether PostgreSQL schema, version 6: LangGraph checkpoints and their pending writes, resume records
-- of a namespace, as SQLite's 008-checkpoints.sql (src/store/checkpoint-types.ts): base64 of the saver's bytes.
CREATE TABLE checkpoints (
  namespace text COLLATE "C" NOT NULL,
  thread_id text COLLATE "C" NOT NULL,
  checkpoint_ns text COLLATE "C" NOT NULL,
  checkpoint_id text COLLATE "C" NOT NULL,
  parent_checkpoint_id text,
  type text NOT NULL,
  checkpoint text NOT NULL,
  metadata_type text NOT NULL,
  metadata text NOT NULL,
  at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE checkpoint_writes (
  namespace text COLLATE "C" NOT NULL,
  thread_id text COLLATE "C" NOT NULL,
  checkpoint_ns text COLLATE "C" NOT NULL,
  checkpoint_id text COLLATE "C" NOT NULL,
  task_id text COLLATE "C" NOT NULL,
  idx integer NOT NULL,
  channel text NOT NULL,
  type text NOT NULL,
  value text NOT NULL,
  task_path text NOT NULL,
  at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
