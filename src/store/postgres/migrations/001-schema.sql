-- Tether PostgreSQL schema, version 1. Same records as the SQLite store (src/store/sqlite/001-schema.sql).
-- events: append-only fact log. seq gives insertion order (history, search "newest written first").
-- Key columns sort bytewise (COLLATE "C"), as in SQLite, whatever the database's default collation.
CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text COLLATE "C" NOT NULL UNIQUE,
  namespace text COLLATE "C" NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  predicate text COLLATE "C" NOT NULL,
  value text,
  value_key text,
  retraction smallint NOT NULL,
  kind text,
  confidence double precision NOT NULL,
  source text,
  evidence text,
  observed_at bigint NOT NULL,
  recorded_at bigint NOT NULL,
  actor_agent text,
  actor_session text,
  actor_key_id text,
  -- The words of subject, predicate, value and evidence from common/words.ts (not to_tsvector's
  -- stems, so the index and the engine's match check agree), each prefixed with 10 hex of the
  -- namespace's hash: the postings of a word are per namespace.
  words text[] NOT NULL
);
CREATE INDEX events_fact ON events (namespace, subject, predicate, observed_at);
CREATE INDEX events_tenant_id ON events (tenant, id);
CREATE INDEX events_namespace_id ON events (namespace, id);
CREATE INDEX events_words ON events USING gin (words);

-- What is believed now: one row per current value, written in the same transaction as the events.
CREATE TABLE beliefs (
  namespace text COLLATE "C" NOT NULL,
  subject text COLLATE "C" NOT NULL,
  predicate text COLLATE "C" NOT NULL,
  observed_at bigint NOT NULL,
  event_id text COLLATE "C" NOT NULL,
  value_key text,
  replaced text NOT NULL,
  PRIMARY KEY (namespace, subject, predicate, observed_at, event_id)
);

CREATE TABLE registry_versions (
  id text COLLATE "C" PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL,
  recorded_at bigint NOT NULL,
  predicates text NOT NULL
);
-- One version per tenant and instant: two replicas seeding a new tenant at once keep one initial version.
CREATE UNIQUE INDEX registry_tenant ON registry_versions (tenant, recorded_at);

CREATE TABLE keys (
  id text COLLATE "C" PRIMARY KEY,
  hash text NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  agent text,
  session text,
  admin smallint NOT NULL,
  note text,
  created_at bigint NOT NULL,
  expires_at bigint,
  revoked_at bigint
);
CREATE INDEX keys_tenant ON keys (tenant);
CREATE INDEX keys_expiry ON keys (expires_at);
