-- Tether SQLite schema, version 1.
-- events: append-only fact log; seq links each row to its FTS entry.
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  namespace TEXT NOT NULL,
  tenant TEXT NOT NULL,
  subject TEXT NOT NULL,
  predicate TEXT NOT NULL,
  value TEXT,
  value_key TEXT,
  retraction INTEGER NOT NULL,
  kind TEXT,
  confidence REAL NOT NULL,
  source TEXT,
  evidence TEXT,
  observed_at INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  actor_agent TEXT,
  actor_session TEXT,
  actor_key_id TEXT
);
-- observed_at last: the latest event time of a fact is one seek.
CREATE INDEX IF NOT EXISTS events_fact ON events (namespace, subject, predicate, observed_at);
CREATE INDEX IF NOT EXISTS events_tenant_id ON events (tenant, id);

-- Contentless FTS index (no second copy of the text); rows are deleted by rowid = events.seq.
-- Every token carries a 10-hex prefix of its namespace, so a search touches only its namespace's
-- postings (a namespace column would make every query scan the whole namespace).
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5 (
  body,
  content = '',
  contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 0'
);

-- What is believed now: one row per current value, kept by the writer in the same transaction as
-- the events. Reads without as_of use it and never fold; as_of reads fold the event log.
CREATE TABLE IF NOT EXISTS beliefs (
  event_id TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  subject TEXT NOT NULL,
  predicate TEXT NOT NULL,
  value_key TEXT,
  observed_at INTEGER,
  replaced TEXT NOT NULL
) WITHOUT ROWID;
-- In read order: a recall of a fact with thousands of values stops after its limit instead of sorting them all.
CREATE INDEX IF NOT EXISTS beliefs_fact ON beliefs (namespace, subject, predicate, observed_at, event_id);
CREATE INDEX IF NOT EXISTS beliefs_value ON beliefs (namespace, subject, predicate, value_key);
CREATE INDEX IF NOT EXISTS beliefs_predicate ON beliefs (namespace, predicate);

CREATE TABLE IF NOT EXISTS registry_versions (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  predicates TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS registry_tenant ON registry_versions (tenant, recorded_at);

CREATE TABLE IF NOT EXISTS keys (
  id TEXT PRIMARY KEY,
  hash TEXT NOT NULL,
  tenant TEXT NOT NULL,
  agent TEXT,
  session TEXT,
  admin INTEGER NOT NULL,
  note TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS keys_tenant ON keys (tenant);
CREATE INDEX IF NOT EXISTS keys_expiry ON keys (expires_at);
