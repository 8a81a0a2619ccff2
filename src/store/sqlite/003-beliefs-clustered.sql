-- Tether SQLite schema, version 3: beliefs stored in read order, no secondary index.
-- The table is clustered on (namespace, subject, predicate, observed_at, event_id): a recall is one range
-- scan, and a remember dirties one random b-tree page for its belief instead of three (the table keyed by
-- event_id, beliefs_fact and beliefs_predicate: ~12 of the ~44 pages of a group commit at 10^6 events).
-- Recall by predicate alone now scans the namespace in subject order and stops at its limit.
CREATE TABLE beliefs_v3 (
  namespace TEXT NOT NULL,
  subject TEXT NOT NULL,
  predicate TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  value_key TEXT,
  replaced TEXT NOT NULL,
  PRIMARY KEY (namespace, subject, predicate, observed_at, event_id)
) WITHOUT ROWID;
INSERT INTO beliefs_v3 (namespace, subject, predicate, observed_at, event_id, value_key, replaced)
  SELECT namespace, subject, predicate, observed_at, event_id, value_key, replaced FROM beliefs;
DROP TABLE beliefs;
ALTER TABLE beliefs_v3 RENAME TO beliefs;
