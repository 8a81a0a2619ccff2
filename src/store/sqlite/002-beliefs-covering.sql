-- Tether SQLite schema, version 2: one index fewer to write per belief, and a table for store bookkeeping.
-- beliefs_value (namespace, subject, predicate, value_key) was a third b-tree page dirtied at a random
-- place by every remember (about 12 of the ~55 pages a group commit wrote at 10^6 events). The read-order
-- index now carries value_key, so "the beliefs of this fact holding this value" is answered from it
-- without visiting the table.
DROP INDEX IF EXISTS beliefs_value;
DROP INDEX IF EXISTS beliefs_fact;
CREATE INDEX beliefs_fact ON beliefs (namespace, subject, predicate, observed_at, event_id, value_key);

-- Store bookkeeping, e.g. fts_seq: the highest events.seq in events_fts (indexing is deferred, see fts-queue.ts).
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
