/**
 * The key cache of one replica: a revocation (here, or told by another replica) is never undone by a read
 * of the store that was in flight across it. Such a read answers its own request, but is not cached.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { KeyService } from '../../src/auth/key-service.ts';
import { systemClock } from '../../src/common/clock.ts';
import type { KeyRecord } from '../../src/store/key-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tether-keys-'));
  store = openSqliteStore({ dataDir: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `store` whose next `getKey` reads at once but answers only when `release()` is called. */
function heldRead(inner: Store) {
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let held = true;
  const wrapped = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'getKey') {
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      }
      return async (id: string): Promise<KeyRecord | null> => {
        const record = await target.getKey(id);
        if (held) {
          held = false;
          await gate;
        }
        return record;
      };
    },
  });
  return { store: wrapped, release: () => release() };
}

for (const how of ['revoked here', 'revoked by another replica (forget)', 'caches flushed (flush)'] as const) {
  describe(`KeyService: a read in flight across an invalidation (${how})`, () => {
    it('answers its request but is not cached: the next check reads the store and refuses', async () => {
      const held = heldRead(store);
      const keys = new KeyService({ store: held.store, clock: systemClock, cacheTtlMs: 60_000 });
      const { key, record } = await keys.mint({ tenant: 'acme', agent: 'a1' });
      const inFlight = keys.verify(key); // reads the unrevoked record, answers after the revocation
      await new Promise((r) => setTimeout(r, 20));
      if (how === 'revoked here') await keys.revoke(record.id);
      else {
        await store.revokeKey(record.id, Date.now()); // another replica's write
        if (how === 'caches flushed (flush)') keys.flush();
        else keys.forget(record.id);
      }
      held.release();
      assert.equal((await inFlight).tenant, 'acme', 'the request that read before the revocation passes');
      await assert.rejects(keys.verify(key), { code: 'key_revoked' });
    });
  });
}

describe('KeyService cache', () => {
  it('serves a verified key from the cache without reading the store again', async () => {
    const keys = new KeyService({ store, clock: systemClock });
    const { key } = await keys.mint({ tenant: 'acme', agent: 'a1' });
    await keys.verify(key);
    await keys.verify(key);
    assert.deepEqual(keys.stats, { hits: 1, misses: 1 });
  });
});
