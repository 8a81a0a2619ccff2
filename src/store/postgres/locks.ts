/**
 * @module
 * Advisory-lock keys and statements of the PostgreSQL store's writes. A write takes, in one global
 * order (so two writers can never wait on each other): its namespaces' locks, shared (a purge takes
 * one exclusive, so it waits for writes in flight and they wait for it), then one exclusive lock per
 * fact, each sorted by key, then the registries of the tenants it was validated for, shared (storing a
 * registry version takes that lock exclusively and nothing else, so it waits for those writes). A write naming more than `FACTS_PER_NAMESPACE` facts of a namespace (a
 * big import) takes that namespace exclusively instead: advisory locks use PostgreSQL's shared lock
 * table, sized by `max_locks_per_transaction`. Locks end with the transaction.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { FactRef } from '../fact-store.ts';

/** Most per-fact locks one write takes in one namespace before it locks the namespace instead. */
export const FACTS_PER_NAMESPACE = 1024;

/** A signed 64-bit advisory-lock key for `text`, as a decimal string (pg sends it as bigint). */
function lockKey(kind: string, text: string): string {
  const digest = createHash('sha256').update(kind).update('\u0000').update(text).digest();
  return BigInt.asIntN(64, digest.readBigUInt64BE(0)).toString();
}

/** The lock key of a namespace. */
export const namespaceKey = (namespace: string): string => lockKey('namespace', namespace);

/** The lock key of a tenant's registry versions (a replacement takes it exclusively). */
export const registryKey = (tenant: string): string => lockKey('registry', tenant);

/** The lock key of a fact. */
export const factLockKey = (f: FactRef): string =>
  lockKey('fact', `${f.namespace}\u0000${f.subject}\u0000${f.predicate}`);

const byKey = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/**
 * Takes the locks of a write over `facts` inside the open transaction of `client`.
 * @param registryTenants tenants whose registry the write was validated with (locked shared, last)
 */
export async function lockFacts(
  client: pg.PoolClient,
  facts: readonly FactRef[],
  registryTenants: readonly string[] = [],
): Promise<void> {
  const perNamespace = new Map<string, Map<string, FactRef>>();
  for (const f of facts) {
    let m = perNamespace.get(f.namespace);
    if (!m) {
      m = new Map();
      perNamespace.set(f.namespace, m);
    }
    m.set(factLockKey(f), f);
  }
  if (perNamespace.size === 0 && registryTenants.length === 0) return;
  const spaces: { key: string; exclusive: boolean }[] = [];
  const factKeys: string[] = [];
  for (const [namespace, m] of perNamespace) {
    const exclusive = m.size > FACTS_PER_NAMESPACE;
    spaces.push({ key: namespaceKey(namespace), exclusive });
    if (!exclusive) factKeys.push(...m.keys());
  }
  spaces.sort((a, b) => byKey(a.key, b.key));
  factKeys.sort(byKey);
  const registries = [...new Set(registryTenants.map(registryKey))].sort(byKey);
  const keys = [...spaces.map((x) => x.key), ...factKeys, ...registries];
  const exclusive = [...spaces.map((x) => x.exclusive), ...factKeys.map(() => true), ...registries.map(() => false)];
  // One statement, one round trip: unnest yields the arrays in order (WITH ORDINALITY, ORDER BY), and
  // the aggregate calls the lock function row by row, so the namespaces are locked before the facts.
  await client.query(
    `SELECT count(CASE WHEN x THEN pg_advisory_xact_lock(k) ELSE pg_advisory_xact_lock_shared(k) END)
     FROM (SELECT k, x FROM unnest($1::bigint[], $2::bool[]) WITH ORDINALITY AS u(k, x, i) ORDER BY i) AS o`,
    [keys, exclusive],
  );
}

/** Takes a namespace exclusively inside the open transaction of `client` (purge). */
export async function lockNamespace(client: pg.PoolClient, namespace: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [namespaceKey(namespace)]);
}
