-- Tether PostgreSQL schema, version 3: exports in commit order (src/store/postgres/export-events.ts).
-- Event ids are taken when a batch is planned, and batches of several replicas (several per replica)
-- commit out of id order, so an export from `since` paging on `id > since` skipped for good an event
-- committed after the cursor with a lower id. Each event now records the id of the transaction that
-- wrote it (64-bit, with its epoch: it only grows); an export pages on (txid, seq) and stops below the
-- oldest transaction still in flight, so nothing can later commit behind its cursor.
-- Rows already stored keep 0: they are all committed (this runs under an exclusive table lock), so
-- they come first; new rows get their transaction's id.
ALTER TABLE events ADD COLUMN txid bigint NOT NULL DEFAULT 0;
ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()::text::bigint;

-- One index per export scope, in export order. The (…, id) indexes served only the id-ordered export;
-- the tenant-prefix reads (factKeys) use events_tenant_txid, namespace-prefix ones events_fact.
CREATE INDEX events_namespace_txid ON events (namespace, txid, seq);
CREATE INDEX events_tenant_txid ON events (tenant, txid, seq);
CREATE INDEX events_txid ON events (txid, seq);
DROP INDEX events_tenant_id;
DROP INDEX events_namespace_id;
