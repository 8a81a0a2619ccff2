-- Tether SQLite schema, version 6: a writer places a value of a multi fact from two index seeks,
-- whatever the fact's size (src/memory/fact-state.ts). Before, the beliefs holding one value were
-- found by scanning all of the fact's (a batch of 500 values into an 8,000-value fact scanned 4 million
-- rows) and a value written at or before the fact's latest time refolded the fact's whole log.
-- beliefs_value: the beliefs of a fact holding one value.
CREATE INDEX beliefs_value ON beliefs (namespace, subject, predicate, value_key);
-- events_retractions: the latest retraction withdrawing a value (FactHead.lastRetractionAt). Partial:
-- retractions are few, assertions pay nothing.
CREATE INDEX events_retractions ON events (namespace, subject, predicate, value_key, observed_at) WHERE retraction = 1;
