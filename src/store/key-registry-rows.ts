/**
 * @module
 * Row <-> record mapping of the `keys` and `registry_versions` tables, shared by the SQLite and
 * PostgreSQL drivers (same columns in both; a key's `admin` is 0/1, a version's predicates JSON text).
 */
import type { KeyRecord } from './key-store.ts';
import type { RegistryVersion } from './registry-store.ts';

/** A `keys` row. */
export interface KeyRow {
  id: string;
  hash: string;
  tenant: string;
  agent: string | null;
  session: string | null;
  /** 1 for an admin key, else 0. */
  admin: number;
  note: string | null;
  /** Epoch ms. */
  created_at: number;
  /** Epoch ms, or null for a key that never expires. */
  expires_at: number | null;
  /** Epoch ms, or null while the key is valid. */
  revoked_at: number | null;
}

export function keyFromRow(r: KeyRow): KeyRecord {
  return {
    id: r.id,
    hash: r.hash,
    tenant: r.tenant,
    agent: r.agent,
    session: r.session,
    admin: r.admin === 1,
    note: r.note,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

/** The columns of the keys table, in the order `keyValues` gives them (both stores insert with it). */
export const KEY_COLUMNS = 'id, hash, tenant, agent, session, admin, note, created_at, expires_at, revoked_at';

/** A key's values in `KEY_COLUMNS` order. */
export function keyValues(key: KeyRecord): unknown[] {
  return [
    key.id,
    key.hash,
    key.tenant,
    key.agent,
    key.session,
    key.admin ? 1 : 0,
    key.note,
    key.createdAt,
    key.expiresAt,
    key.revokedAt,
  ];
}

/** A `registry_versions` row, as both stores select it (`id, tenant, recorded_at, predicates`). */
export interface RegistryRow {
  id: string;
  tenant: string;
  /** Epoch ms. */
  recorded_at: number;
  /** JSON text of the `PredicateDef` list. */
  predicates: string;
}

export function registryVersionFromRow(r: RegistryRow): RegistryVersion {
  return { id: r.id, tenant: r.tenant, recordedAt: r.recorded_at, predicates: JSON.parse(r.predicates) };
}
