-- Tether PostgreSQL schema, version 2: leases and resume records (src/store/resume-types.ts), as
-- SQLite's 005-resume.sql. Epochs come from one sequence for the whole database, so they only grow,
-- across replicas, restarts and purges (a purge erases a namespace's lease row, not the sequence).
CREATE SEQUENCE lease_epoch AS bigint;

CREATE TABLE leases (
  namespace text COLLATE "C" PRIMARY KEY,
  holder text NOT NULL,
  epoch bigint NOT NULL,
  acquired_at bigint NOT NULL,
  expires_at bigint NOT NULL
);

CREATE TABLE working_states (
  namespace text COLLATE "C" NOT NULL,
  version bigint NOT NULL,
  state text NOT NULL,
  updated_at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, version)
);

CREATE TABLE milestones (
  namespace text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  name text NOT NULL,
  progress text,
  at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, seq)
);

CREATE TABLE turns (
  namespace text COLLATE "C" NOT NULL,
  seq bigint NOT NULL,
  role text NOT NULL,
  content text NOT NULL,
  name text,
  message_id text,
  brief text,
  output_ref text,
  at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, seq)
);
CREATE UNIQUE INDEX turns_message ON turns (namespace, message_id) WHERE message_id IS NOT NULL;

CREATE TABLE outputs (
  namespace text COLLATE "C" NOT NULL,
  ref text COLLATE "C" NOT NULL,
  content text NOT NULL,
  tool text,
  summary text,
  bytes bigint NOT NULL,
  at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, ref)
);

CREATE TABLE pointers (
  namespace text COLLATE "C" NOT NULL,
  name text COLLATE "C" NOT NULL,
  type text NOT NULL,
  fields text NOT NULL,
  note text,
  updated_at bigint NOT NULL,
  epoch bigint NOT NULL,
  PRIMARY KEY (namespace, name)
);
