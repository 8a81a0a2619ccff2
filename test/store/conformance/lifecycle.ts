/**
 * Conformance: a store's lifecycle — `countEvents` (of a namespace) over appends and imports, `ping`, `kind`, and a
 * `close` that is safe twice and concurrently, after which `ping` fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace, makeEvent } from './helpers.ts';

/**
 * Declares the lifecycle conformance tests.
 * @param open makes a new store on each call (not the shared one): these tests close what they open
 */
export function lifecycleConformance(open: () => Promise<Store>): void {
  describe('Store.countEvents', () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(async () => {
      await store.close();
    });

    // Counts of one namespace: other tests (and other test files, on a shared database) write meanwhile.
    it('counts appended and imported events of a namespace, not skipped ones', async () => {
      const ns = freshNamespace();
      assert.equal(await store.countEvents(ns), 0);
      const e = makeEvent(ns);
      await store.appendEvents([e, makeEvent(ns, { value: 'red' })]);
      assert.equal(await store.countEvents(ns), 2);
      assert.equal(await store.importEvents([e, makeEvent(ns, { value: 'green' })]), 1);
      assert.equal(await store.countEvents(ns), 3);
      assert.equal(await store.countEvents(freshNamespace()), 0);
      assert.ok((await store.countEvents()) >= 3, 'the total includes them');
    });
  });

  describe('Store.ping + close', () => {
    it('pings while open, closes twice safely, and refuses to ping once closed', async () => {
      const own = await open();
      await own.ping();
      assert.equal(typeof own.kind, 'string');
      assert.ok(own.kind.length > 0);
      await own.close();
      await own.close();
      await assert.rejects(own.ping());
    });

    it('closes concurrently without error', async () => {
      const own = await open();
      await Promise.all([own.close(), own.close()]);
    });
  });
}
