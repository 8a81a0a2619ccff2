-- Tether SQLite schema, version 9: a value of a multi fact is found by value only in facts that hold
-- many beliefs. Version 6's beliefs_value indexed every belief by value: 18% of the file and ~11% of
-- the CPU of a load at 10^5 events, and one more b-tree page dirtied at a random place per remember,
-- for a lookup that only a fact of thousands of values needs (a writer reads one value's beliefs: a
-- fact of a few values is one page of the clustered table, scanned). Kept here, by triggers, for the
-- facts past 64 beliefs; `readFactHead` (fact-reads.ts) seeks it for those and scans the others.
DROP INDEX beliefs_value;

-- The facts holding more than 64 beliefs (once past it, until they hold none).
CREATE TABLE big_facts (
  namespace TEXT NOT NULL,
  subject TEXT NOT NULL,
  predicate TEXT NOT NULL,
  PRIMARY KEY (namespace, subject, predicate)
) WITHOUT ROWID;

-- The beliefs of those facts by value, pointing at their row in beliefs (its primary key).
CREATE TABLE big_fact_values (
  namespace TEXT NOT NULL,
  subject TEXT NOT NULL,
  predicate TEXT NOT NULL,
  value_key TEXT NOT NULL,
  observed_at INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  PRIMARY KEY (namespace, subject, predicate, value_key, observed_at, event_id)
) WITHOUT ROWID;

INSERT INTO big_facts (namespace, subject, predicate)
  SELECT namespace, subject, predicate FROM beliefs GROUP BY namespace, subject, predicate HAVING count(*) > 64;
INSERT INTO big_fact_values (namespace, subject, predicate, value_key, observed_at, event_id)
  SELECT b.namespace, b.subject, b.predicate, b.value_key, b.observed_at, b.event_id
  FROM big_facts f JOIN beliefs b ON b.namespace = f.namespace AND b.subject = f.subject AND b.predicate = f.predicate
  WHERE b.value_key IS NOT NULL;

-- A belief of a big fact: listed. (INSERT OR REPLACE of a belief replaces the same row: same key here.)
CREATE TRIGGER beliefs_big_value AFTER INSERT ON beliefs
WHEN NEW.value_key IS NOT NULL
  AND EXISTS (SELECT 1 FROM big_facts WHERE namespace = NEW.namespace AND subject = NEW.subject AND predicate = NEW.predicate)
BEGIN
  INSERT OR IGNORE INTO big_fact_values (namespace, subject, predicate, value_key, observed_at, event_id)
  VALUES (NEW.namespace, NEW.subject, NEW.predicate, NEW.value_key, NEW.observed_at, NEW.event_id);
END;

-- The 65th belief of a fact: the fact becomes big and all its beliefs are listed. The count stops at 65
-- rows of the page(s) the insert just touched.
CREATE TRIGGER beliefs_big_fact AFTER INSERT ON beliefs
WHEN NOT EXISTS (SELECT 1 FROM big_facts WHERE namespace = NEW.namespace AND subject = NEW.subject AND predicate = NEW.predicate)
  AND (SELECT count(*) FROM (SELECT 1 FROM beliefs
       WHERE namespace = NEW.namespace AND subject = NEW.subject AND predicate = NEW.predicate LIMIT 65)) > 64
BEGIN
  INSERT INTO big_facts (namespace, subject, predicate) VALUES (NEW.namespace, NEW.subject, NEW.predicate);
  INSERT OR IGNORE INTO big_fact_values (namespace, subject, predicate, value_key, observed_at, event_id)
    SELECT namespace, subject, predicate, value_key, observed_at, event_id FROM beliefs
    WHERE namespace = NEW.namespace AND subject = NEW.subject AND predicate = NEW.predicate AND value_key IS NOT NULL;
END;

-- A belief gone (replaced, retracted, purged): unlisted; a fact left with none is no longer big (a purge
-- leaves no name behind).
CREATE TRIGGER beliefs_big_gone AFTER DELETE ON beliefs
WHEN EXISTS (SELECT 1 FROM big_facts WHERE namespace = OLD.namespace AND subject = OLD.subject AND predicate = OLD.predicate)
BEGIN
  DELETE FROM big_fact_values
  WHERE namespace = OLD.namespace AND subject = OLD.subject AND predicate = OLD.predicate
    AND value_key = OLD.value_key AND observed_at = OLD.observed_at AND event_id = OLD.event_id;
  DELETE FROM big_facts
  WHERE namespace = OLD.namespace AND subject = OLD.subject AND predicate = OLD.predicate
    AND NOT EXISTS (SELECT 1 FROM beliefs WHERE namespace = OLD.namespace AND subject = OLD.subject AND predicate = OLD.predicate);
END;
