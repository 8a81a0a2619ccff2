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
CREATE INDEX IF NOT EXISTS events_fact ON events (namespace, subject, predicate);
CREATE INDEX IF NOT EXISTS events_predicate ON events (namespace, predicate);
CREATE INDEX IF NOT EXISTS events_tenant_id ON events (tenant, id);

-- Contentless FTS index (no second copy of the text); rows are deleted by rowid = events.seq.
-- ns holds one opaque token per namespace so a search never leaves its namespace.
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5 (
  ns, body,
  content = '',
  contentless_delete = 1,
  tokenize = 'unicode61 remove_diacritics 2'
);

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
