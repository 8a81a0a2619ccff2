/**
 * @module
 * The SQLite store's keys and registry versions tables: plain statements, no memory semantics. Synchronous;
 * `sqlite-store.ts` wraps each call (writes wait out a purge's WAL truncate there). Like `resume-tables.ts`.
 */
import type Database from 'better-sqlite3';
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

/** Keys and registry versions over one connection's cached statements. */
export class SqliteKeyRegistryTables {
  readonly #sql: (text: string) => Database.Statement;

  constructor(sql: (text: string) => Database.Statement) {
    this.#sql = sql;
  }

  registryVersions(tenant: string): RegistryVersion[] {
    const rows = this.#sql(
      'SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE tenant = ? ORDER BY recorded_at, id',
    ).all(tenant) as RegistryRow[];
    return rows.map(registryVersionFromRow);
  }

  registryVersionById(id: string): RegistryVersion | null {
    const row = this.#sql('SELECT id, tenant, recorded_at, predicates FROM registry_versions WHERE id = ?').get(id) as
      | RegistryRow
      | undefined;
    return row ? registryVersionFromRow(row) : null;
  }

  /** Inserts a version; `later` moves its time past the tenant's newest (one statement: atomic). */
  appendRegistryVersion(version: RegistryVersion, later = false): RegistryVersion {
    const row = this.#sql(
      `INSERT INTO registry_versions (id, tenant, recorded_at, predicates)
       SELECT ?, ?, CASE WHEN ? THEN max(?, coalesce((SELECT max(recorded_at) + 1 FROM registry_versions
         WHERE tenant = ?), 0)) ELSE ? END, ? RETURNING recorded_at`,
    ).get(
      version.id,
      version.tenant,
      later ? 1 : 0,
      version.recordedAt,
      version.tenant,
      version.recordedAt,
      JSON.stringify(version.predicates),
    ) as { recorded_at: number };
    return { ...version, recordedAt: row.recorded_at };
  }

  insertKey(key: KeyRecord): void {
    this.#sql(`INSERT INTO keys (${KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...keyValues(key));
  }

  getKey(id: string): KeyRecord | null {
    const row = this.#sql('SELECT * FROM keys WHERE id = ?').get(id) as KeyRow | undefined;
    return row ? keyFromRow(row) : null;
  }

  /** Keys of `tenant` (all of them for `*`), in creation order. */
  listKeys(tenant: string): KeyRecord[] {
    const rows = (
      tenant === '*'
        ? this.#sql('SELECT * FROM keys ORDER BY created_at, id').all()
        : this.#sql('SELECT * FROM keys WHERE tenant = ? ORDER BY created_at, id').all(tenant)
    ) as KeyRow[];
    return rows.map(keyFromRow);
  }

  deleteExpiredKeys(before: number): number {
    return this.#sql('DELETE FROM keys WHERE expires_at IS NOT NULL AND expires_at < ?').run(before).changes;
  }

  /** Sets `revoked_at` once (a second revoke keeps the first time); false when the key does not exist. */
  revokeKey(id: string, at: number): boolean {
    return this.#sql('UPDATE keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?').run(at, id).changes > 0;
  }
}
