/**
 * Conformance: leases — acquire refuses while a lease is live (whoever asks), epochs only grow
 * (across expiry, release and purge), renew and release need the live epoch, and of 200 concurrent
 * acquires exactly one wins.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LeaseRecord } from '../../../src/store/resume-types.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace } from './helpers.ts';
import { fenceOf, held, T0 } from './resume-helpers.ts';

/**
 * Declares the lease conformance tests.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function leasesConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.acquireLease', () => {
    it('gives a free namespace a lease with a positive epoch, the holder and now + ttl', async () => {
      const ns = freshNamespace();
      assert.equal(await store.getLease(ns), null);
      const lease = await held(store, ns, 'pod-a', 30_000);
      assert.ok(Number.isInteger(lease.epoch) && lease.epoch > 0);
      assert.deepEqual(lease, {
        namespace: ns,
        holder: 'pod-a',
        epoch: lease.epoch,
        acquiredAt: T0,
        expiresAt: T0 + 30_000,
        ttlMs: 30_000,
      });
      assert.deepEqual(await store.getLease(ns), lease);
    });

    it('refuses while the lease is live, also to the same holder, naming the holder and until when', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns, 'pod-a', 30_000);
      for (const holder of ['pod-b', 'pod-a']) {
        const again = await store.acquireLease({ namespace: ns, holder, ttlMs: 30_000, now: T0 + 29_999 });
        assert.deepEqual(again, { acquired: false, held: lease });
      }
      assert.deepEqual(await store.getLease(ns), lease);
    });

    it('lets another holder take a lapsed lease with a higher epoch', async () => {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 30_000);
      const b = await held(store, ns, 'pod-b', 30_000, a.expiresAt);
      assert.ok(b.epoch > a.epoch);
      assert.equal(b.holder, 'pod-b');
      assert.deepEqual(await store.getLease(ns), b);
    });

    it('issues epochs that grow across namespaces (one store-wide counter)', async () => {
      const first = await held(store, freshNamespace());
      const second = await held(store, freshNamespace());
      assert.ok(second.epoch > first.epoch);
    });

    it('gives exactly one of 200 concurrent acquires the lease; the others see it held', async () => {
      const ns = freshNamespace();
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          store.acquireLease({ namespace: ns, holder: `pod-${i}`, ttlMs: 60_000, now: T0 }),
        ),
      );
      const winners = answers.filter((a) => a.acquired);
      assert.equal(winners.length, 1);
      const lease = (winners[0] as { lease: LeaseRecord }).lease;
      for (const a of answers) if (!a.acquired) assert.deepEqual(a.held, lease);
      assert.deepEqual(await store.getLease(ns), lease);
    });

    it('gives a higher epoch after a purge of the namespace, which erases the lease', async () => {
      const ns = freshNamespace();
      const before = await held(store, ns);
      await store.purgeNamespace(ns);
      assert.equal(await store.getLease(ns), null);
      const after = await held(store, ns);
      assert.ok(after.epoch > before.epoch);
    });
  });

  describe('Store.renewLease', () => {
    it('extends the live lease, keeping its epoch', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns, 'pod-a', 30_000);
      const renewed = await store.renewLease(fenceOf(lease, T0 + 20_000), 30_000);
      assert.deepEqual(renewed, { ok: true, value: { ...lease, expiresAt: T0 + 50_000 } });
      assert.deepEqual(await store.getLease(ns), { ...lease, expiresAt: T0 + 50_000 });
    });

    it('keeps the TTL the lease was taken with when none is given, and the last one given', async () => {
      const ns = freshNamespace();
      const lease = await held(store, ns, 'pod-a', 1500);
      const kept = await store.renewLease(fenceOf(lease, T0 + 1000));
      assert.deepEqual(kept, { ok: true, value: { ...lease, expiresAt: T0 + 2500, ttlMs: 1500 } });
      const longer = await store.renewLease(fenceOf(lease, T0 + 2000), 4000);
      assert.deepEqual(longer, { ok: true, value: { ...lease, expiresAt: T0 + 6000, ttlMs: 4000 } });
      const again = await store.renewLease(fenceOf(lease, T0 + 5000));
      assert.deepEqual(again, { ok: true, value: { ...lease, expiresAt: T0 + 9000, ttlMs: 4000 } });
      assert.deepEqual(await store.getLease(ns), { ...lease, expiresAt: T0 + 9000, ttlMs: 4000 });
      // A successor's lease has its own TTL, not the lapsed one's.
      const next = await held(store, ns, 'pod-b', 2000, T0 + 9000);
      assert.equal(next.ttlMs, 2000);
      const released = await store.releaseLease(fenceOf(next, T0 + 9500));
      assert.deepEqual(released, { ok: true, value: { ...next, expiresAt: T0 + 9500 } });
    });

    it('refuses a lapsed lease and a superseded epoch with lost, and no lease with not_held', async () => {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 30_000);
      assert.deepEqual(await store.renewLease(fenceOf(a, a.expiresAt), 30_000), {
        ok: false,
        reason: 'lost',
        lease: a,
      });
      const b = await held(store, ns, 'pod-b', 30_000, a.expiresAt);
      assert.deepEqual(await store.renewLease(fenceOf(a, a.expiresAt + 1), 30_000), {
        ok: false,
        reason: 'lost',
        lease: b,
      });
      assert.deepEqual(await store.getLease(ns), b);
      const none = freshNamespace();
      assert.deepEqual(await store.renewLease({ namespace: none, epoch: a.epoch, now: T0 }, 1000), {
        ok: false,
        reason: 'not_held',
        lease: null,
      });
    });
  });

  describe('Store.releaseLease', () => {
    it('ends the lease at once; a re-acquire gets a higher epoch and the old epoch is lost', async () => {
      const ns = freshNamespace();
      const a = await held(store, ns, 'pod-a', 60_000);
      const released = await store.releaseLease(fenceOf(a, T0 + 10));
      assert.deepEqual(released, { ok: true, value: { ...a, expiresAt: T0 + 10 } });
      assert.deepEqual(await store.releaseLease(fenceOf(a, T0 + 11)), {
        ok: false,
        reason: 'lost',
        lease: { ...a, expiresAt: T0 + 10 },
      });
      const again = await held(store, ns, 'pod-a', 60_000, T0 + 10);
      assert.ok(again.epoch > a.epoch);
      const write = await store.writeResume(fenceOf(a, T0 + 12), [
        { kind: 'delete_pointer', namespace: ns, name: 'x' },
      ]);
      assert.deepEqual(write, { ok: false, reason: 'lost', lease: again });
    });
  });
}
