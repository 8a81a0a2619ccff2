/**
 * Conformance: the small tables beside the event log — predicate registry versions (oldest first, per
 * tenant) and API keys (insert/get/list, revoke once).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { newEventId } from '../../../src/common/ids.ts';
import type { KeyRecord } from '../../../src/store/key-store.ts';
import type { RegistryVersion } from '../../../src/store/registry-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshTenant, makeKey } from './helpers.ts';

/**
 * Declares the conformance tests of registry versions and keys.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function registryKeysConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store registry versions', () => {
    const v = (tenant: string, recordedAt: number, names: string[]): RegistryVersion => ({
      id: newEventId(),
      tenant,
      recordedAt,
      predicates: names.map((n) => ({ name: n, cardinality: 'single', valueType: 'string' })),
    });

    it('returns nothing for a tenant without versions', async () => {
      assert.deepEqual(await store.registryVersions(freshTenant()), []);
    });

    it('keeps every field of a version', async () => {
      const tenant = freshTenant();
      const version: RegistryVersion = {
        id: newEventId(),
        tenant,
        recordedAt: 0,
        predicates: [
          { name: 'stage', cardinality: 'single', valueType: 'enum', allowed: ['lead', 'won'], description: 'deal' },
          { name: 'knows', cardinality: 'multi', valueType: 'ref', aliases: ['friend_of'] },
          { name: 'note', cardinality: 'multi', valueType: 'string' },
        ],
      };
      await store.appendRegistryVersion(version);
      assert.deepEqual(await store.registryVersions(tenant), [version]);
    });

    it('returns versions oldest first, whatever the append order, one tenant only', async () => {
      const tenant = freshTenant();
      const other = freshTenant();
      const initial = v(tenant, 0, ['name']);
      const late = v(tenant, 2000, ['name', 'lives_in', 'knows']);
      const middle = v(tenant, 1000, ['name', 'lives_in']);
      await store.appendRegistryVersion(initial);
      await store.appendRegistryVersion(late);
      await store.appendRegistryVersion(v(other, 500, ['other']));
      await store.appendRegistryVersion(middle);
      assert.deepEqual(await store.registryVersions(tenant), [initial, middle, late]);
      assert.equal((await store.registryVersions(other)).length, 1);
    });

    it('finds a version by its id, of whichever tenant; null for an id never stored', async () => {
      const version = v(freshTenant(), 0, ['name']);
      await store.appendRegistryVersion(version);
      assert.deepEqual(await store.registryVersionById(version.id), version);
      assert.equal(await store.registryVersionById(newEventId()), null);
    });

    it('stores a replacement (`later`) after the newest version, at its own time when that is later', async () => {
      const tenant = freshTenant();
      await store.appendRegistryVersion(v(tenant, 0, ['name']));
      const first = await store.appendRegistryVersion(v(tenant, 1000, ['name', 'a']), { later: true });
      assert.equal(first.recordedAt, 1000);
      // Same ms (another replica's cache was behind): 1 ms after the stored one, never a conflict.
      const second = await store.appendRegistryVersion(v(tenant, 1000, ['name', 'b']), { later: true });
      assert.equal(second.recordedAt, 1001);
      const third = await store.appendRegistryVersion(v(tenant, 5000, ['name', 'c']), { later: true });
      assert.equal(third.recordedAt, 5000);
      assert.deepEqual(
        (await store.registryVersions(tenant)).map((x) => x.recordedAt),
        [0, 1000, 1001, 5000],
      );
    });
  });

  describe('Store keys', () => {
    it('inserts and gets a key with every field', async () => {
      const tenant = freshTenant();
      const agentKey = makeKey(tenant);
      const adminKey = makeKey(tenant, { agent: null, session: null, admin: true, note: null, expiresAt: null });
      await store.insertKey(agentKey);
      await store.insertKey(adminKey);
      assert.deepEqual(await store.getKey(agentKey.id), agentKey);
      assert.deepEqual(await store.getKey(adminKey.id), adminKey);
      assert.equal(await store.getKey(randomBytes(8).toString('hex')), null);
    });

    it('lists keys of one tenant, or of every tenant with *', async () => {
      const tenant = freshTenant();
      const other = freshTenant();
      const a1 = makeKey(tenant);
      const a2 = makeKey(tenant, { admin: true, agent: null, createdAt: Date.UTC(2026, 0, 2) });
      const b1 = makeKey(other);
      for (const k of [a1, b1, a2]) await store.insertKey(k);
      const byId = (ks: KeyRecord[]) => [...ks].sort((x, y) => (x.id < y.id ? -1 : 1));
      assert.deepEqual(byId(await store.listKeys(tenant)), byId([a1, a2]));
      assert.deepEqual(await store.listKeys(other), [b1]);
      assert.deepEqual(await store.listKeys(freshTenant()), []);
      const all = await store.listKeys('*');
      const mine = all.filter((k) => [a1.id, a2.id, b1.id].includes(k.id));
      assert.deepEqual(byId(mine), byId([a1, a2, b1]));
    });

    it('revokes a key once: a repeat keeps the first time, an unknown id gives false', async () => {
      const key = makeKey(freshTenant());
      await store.insertKey(key);
      const t1 = Date.UTC(2026, 0, 10);
      assert.equal(await store.revokeKey(key.id, t1), true);
      assert.deepEqual(await store.getKey(key.id), { ...key, revokedAt: t1 });
      assert.equal(await store.revokeKey(key.id, t1 + 5000), true);
      assert.equal((await store.getKey(key.id))?.revokedAt, t1);
      assert.equal(await store.revokeKey(randomBytes(8).toString('hex'), t1), false);
    });
  });
}
