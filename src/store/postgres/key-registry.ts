/**
 * @module
 * Keys and registry versions of the PostgreSQL store, as functions over a client (the pool, or a
 * transaction's). A revocation notifies the other replicas in the same statement, so it is told
 * exactly when it commits. Used by `PostgresStore`.
 */
import { KEY_COLUMNS, type KeyRow, keyFromRow, keyValues } from '../sqlite/rows.ts';
import type { KeyRecord, RegistryVersion } from '../store.ts';
import { CHANGES_CHANNEL } from './change-listener.ts';
import type { Queryable } from './queries.ts';

export async function readRegistryVersions(db: Queryable, tenant: string): Promise<RegistryVersion[]> {
  const res = await db.query<{ id: string; tenant: string; recorded_at: number; predicates: string }>(
    'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE tenant = $1 ORDER BY recorded_at, id',
    [tenant],
  );
  return res.rows.map((r) => ({
    id: r.id,
    tenant: r.tenant,
    recordedAt: r.recorded_at,
    predicates: JSON.parse(r.predicates),
  }));
}

/** Inserts a version; a tenant's initial one (recordedAt 0), seeded by two replicas at once, is kept once. */
export async function insertRegistryVersion(db: Queryable, version: RegistryVersion): Promise<void> {
  const initial = version.recordedAt === 0 ? 'ON CONFLICT (tenant, recorded_at) DO NOTHING' : '';
  await db.query(
    `INSERT INTO registry_versions (id, tenant, recorded_at, predicates) VALUES ($1, $2, $3, $4) ${initial}`,
    [version.id, version.tenant, version.recordedAt, JSON.stringify(version.predicates)],
  );
}

export async function insertKeyRow(db: Queryable, key: KeyRecord): Promise<void> {
  await db.query(`INSERT INTO keys (${KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, keyValues(key));
}

export async function readKey(db: Queryable, id: string): Promise<KeyRecord | null> {
  const res = await db.query<KeyRow>('SELECT * FROM keys WHERE id = $1', [id]);
  return res.rows[0] ? keyFromRow(res.rows[0]) : null;
}

/** Keys of one tenant, or all when `tenant` is `*`. */
export async function readKeys(db: Queryable, tenant: string): Promise<KeyRecord[]> {
  const res =
    tenant === '*'
      ? await db.query<KeyRow>('SELECT * FROM keys ORDER BY created_at, id')
      : await db.query<KeyRow>('SELECT * FROM keys WHERE tenant = $1 ORDER BY created_at, id', [tenant]);
  return res.rows.map(keyFromRow);
}

export async function deleteExpired(db: Queryable, before: number): Promise<number> {
  const res = await db.query('DELETE FROM keys WHERE expires_at IS NOT NULL AND expires_at < $1', [before]);
  return res.rowCount ?? 0;
}

/** Marks a key revoked and notifies the other replicas, in one statement. False when there is no such key. */
export async function revokeKeyRow(db: Queryable, id: string, at: number): Promise<boolean> {
  const res = await db.query(
    `WITH u AS (UPDATE keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 RETURNING id)
     SELECT pg_notify($3, json_build_object('kind', 'key_revoked', 'id', u.id)::text) FROM u`,
    [at, id, CHANGES_CHANNEL],
  );
  return (res.rowCount ?? 0) > 0;
}
