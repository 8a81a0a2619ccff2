/**
 * @module
 * Keys and registry versions of the PostgreSQL store, as functions over a client (the pool, or a
 * transaction's). A revocation notifies the other replicas in the same statement, so it is told
 * exactly when it commits. Used by `PostgresStore`.
 */

import {
  KEY_COLUMNS,
  type KeyRow,
  keyFromRow,
  keyValues,
  type RegistryRow,
  registryVersionFromRow,
} from '../key-registry-rows.ts';
import type { KeyRecord } from '../key-store.ts';
import type { RegistryVersion } from '../registry-store.ts';
import { StaleRegistryError } from '../stale-registry.ts';
import { CHANGES_CHANNEL } from './change-listener.ts';
import { registryKey } from './locks.ts';
import type { Queryable } from './queries.ts';

export async function readRegistryVersions(db: Queryable, tenant: string): Promise<RegistryVersion[]> {
  const res = await db.query<RegistryRow>(
    'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE tenant = $1 ORDER BY recorded_at, id',
    [tenant],
  );
  return res.rows.map(registryVersionFromRow);
}

export async function readRegistryVersionById(db: Queryable, id: string): Promise<RegistryVersion | null> {
  const res = await db.query<RegistryRow>(
    'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE id = $1',
    [id],
  );
  const row = res.rows[0];
  return row ? registryVersionFromRow(row) : null;
}

/**
 * Inserts a version inside the open transaction of `db`; a tenant's initial one (recordedAt 0), seeded
 * by two replicas at once, is kept once. `later` (a replacement) stores it 1 ms after the tenant's
 * newest version if that is later than its own time: under the tenant's registry lock, since two
 * replicas replacing in the same ms each computed "their last + 1" from their own cache (23505).
 * @returns the version as stored
 */
export async function insertRegistryVersion(
  db: Queryable,
  version: RegistryVersion,
  later = false,
): Promise<RegistryVersion> {
  const values = [version.id, version.tenant, version.recordedAt, JSON.stringify(version.predicates)];
  // Exclusive: writes validated with the tenant's previous version (holding this lock shared, see
  // locks.ts) commit first, so the rebuild after a cardinality change sees their events, and writes
  // that lock after this commits find the new version (`readNewestRegistryIds`) and are planned again.
  await db.query('SELECT pg_advisory_xact_lock($1::bigint)', [registryKey(version.tenant)]);
  if (!later) {
    const initial = version.recordedAt === 0 ? 'ON CONFLICT (tenant, recorded_at) DO NOTHING' : '';
    await db.query(
      `INSERT INTO registry_versions (id, tenant, recorded_at, predicates) VALUES ($1, $2, $3, $4) ${initial}`,
      values,
    );
    return version;
  }
  // The lock, then the insert: under READ COMMITTED the insert's snapshot is taken after the lock is
  // held, so it sees the version the previous holder committed.
  const res = await db.query<{ recorded_at: number }>(
    `INSERT INTO registry_versions (id, tenant, recorded_at, predicates)
     SELECT $1, $2, greatest($3::bigint, coalesce(max(recorded_at) + 1, 0)), $4 FROM registry_versions WHERE tenant = $2
     RETURNING recorded_at`,
    values,
  );
  return { ...version, recordedAt: Number(res.rows[0]?.recorded_at) };
}

/**
 * Checks that each tenant's newest stored version is the one its part of a write was validated with,
 * in one statement (an index lookup per tenant); nothing to do for a write that names none. Run after
 * the write's registry locks are held (`lockFacts`), in a statement of its own: under READ COMMITTED
 * its snapshot is then taken after any version whose insert held the lock has committed.
 * @throws {StaleRegistryError} with each tenant's newest version id, when one is not
 */
export async function checkRegistryVersions(
  db: Queryable,
  planned: readonly { tenant: string; versionId: string }[],
): Promise<void> {
  if (planned.length === 0) return;
  const res = await db.query<{ tenant: string; id: string }>(
    `SELECT t.tenant, v.id FROM unnest($1::text[]) AS t(tenant)
     JOIN LATERAL (SELECT id FROM registry_versions r WHERE r.tenant = t.tenant
                   ORDER BY recorded_at DESC LIMIT 1) v ON true`,
    [[...new Set(planned.map((r) => r.tenant))]],
  );
  const newest = new Map(res.rows.map((r) => [r.tenant, r.id]));
  if (planned.some((r) => newest.get(r.tenant) !== r.versionId)) throw new StaleRegistryError(newest);
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
