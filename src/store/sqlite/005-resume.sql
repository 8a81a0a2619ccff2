-- Tether SQLite schema, version 5: leases and resume records (src/store/resume-types.ts).
-- The epoch counter is one row for the whole store, so epochs only grow: a purge erases a namespace's
-- lease row but not the counter. Record rows carry the lease epoch of their writer.
CREATE TABLE lease_epoch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT INTO lease_epoch (id, last) VALUES (1, 0);

CREATE TABLE leases (
  namespace TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE working_states (
  namespace TEXT NOT NULL,
  version INTEGER NOT NULL,
  state TEXT NOT NULL,            -- JSON of WorkingStateFields
  updated_at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, version)
);

CREATE TABLE milestones (
  namespace TEXT NOT NULL,
  seq INTEGER NOT NULL,
  name TEXT NOT NULL,
  progress TEXT,
  at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, seq)
);

CREATE TABLE turns (
  namespace TEXT NOT NULL,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  name TEXT,
  message_id TEXT,
  brief TEXT,
  output_ref TEXT,
  at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, seq)
);
CREATE UNIQUE INDEX turns_message ON turns (namespace, message_id) WHERE message_id IS NOT NULL;

CREATE TABLE outputs (
  namespace TEXT NOT NULL,
  ref TEXT NOT NULL,
  content TEXT NOT NULL,
  tool TEXT,
  summary TEXT,
  bytes INTEGER NOT NULL,
  at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, ref)
);

CREATE TABLE pointers (
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  fields TEXT NOT NULL,           -- JSON object of strings
  note TEXT,
  updated_at INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  PRIMARY KEY (namespace, name)
);
