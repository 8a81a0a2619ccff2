/**
 * @module
 * The `SessionStore` conformance suite: every store (memory now, Redis later) must pass it.
 * `sessionStoreConformance(name, open)` registers one `describe` per capability; each test opens a
 * fresh store through the factory and closes it after.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { SessionRecord, SessionStore } from '../../src/sessions/session-store.ts';

/** Opens a fresh, empty store (or one with a unique key prefix). */
export type StoreFactory = () => Promise<SessionStore>;

function record(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    key: `k_${randomUUID()}`,
    service: 'svc-a',
    instance: 'svc-a-abcde',
    claim: 'svc-a-0123456789',
    state: 'idle',
    createdAt: 1_000,
    lastActive: 1_000,
    expiresAt: null,
    ...over,
  };
}

async function withStore(open: StoreFactory, fn: (s: SessionStore) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** Registers the conformance suite for one store. */
export function sessionStoreConformance(name: string, open: StoreFactory): void {
  describe(`SessionStore conformance: ${name}`, () => {
    describe('put/get', () => {
      it('returns what was put, field for field', () =>
        withStore(open, async (s) => {
          const r = record({ expiresAt: 9_000, state: 'paused' });
          await s.put(r);
          assert.deepEqual(await s.get(r.service, r.key), r);
        }));
      it('returns undefined for an unknown key and keeps services apart', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.put(r);
          assert.equal(await s.get('svc-b', r.key), undefined);
          assert.equal(await s.get(r.service, 'nope'), undefined);
        }));
      it('put replaces the record of the same service and key', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.put(r);
          await s.put({ ...r, instance: 'svc-a-zzzzz' });
          assert.equal((await s.get(r.service, r.key))?.instance, 'svc-a-zzzzz');
        }));
      it('returned records are copies', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.put(r);
          const got = await s.get(r.service, r.key);
          if (got) got.instance = 'mutated';
          r.instance = 'mutated-too';
          assert.equal((await s.get(r.service, r.key))?.instance, 'svc-a-abcde');
        }));
    });
    describe('update', () => {
      it('changes state and lastActive only', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.put(r);
          await s.update(r.service, r.key, { state: 'active', lastActive: 5_000 });
          assert.deepEqual(await s.get(r.service, r.key), { ...r, state: 'active', lastActive: 5_000 });
        }));
      it('does nothing for an unknown key', () =>
        withStore(open, async (s) => {
          await s.update('svc-a', 'ghost', { state: 'active' });
          assert.equal(await s.get('svc-a', 'ghost'), undefined);
        }));
    });
    describe('delete', () => {
      it('removes the record and says whether one existed', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.put(r);
          assert.equal(await s.delete(r.service, r.key), true);
          assert.equal(await s.get(r.service, r.key), undefined);
          assert.equal(await s.delete(r.service, r.key), false);
        }));
    });
    describe('list', () => {
      it('lists all records, or one service, ordered by createdAt', () =>
        withStore(open, async (s) => {
          const a = record({ createdAt: 3 });
          const b = record({ createdAt: 1, service: 'svc-b' });
          const c = record({ createdAt: 2 });
          for (const r of [a, b, c]) await s.put(r);
          const mine = new Set([a.key, b.key, c.key]);
          const all = (await s.list()).filter((r) => mine.has(r.key));
          assert.deepEqual(
            all.map((r) => r.key),
            [b.key, c.key, a.key],
          );
          assert.deepEqual(
            (await s.list('svc-a')).filter((r) => mine.has(r.key)).map((r) => r.key),
            [c.key, a.key],
          );
        }));
    });
    describe('close', () => {
      it('can be called twice', async () => {
        const s = await open();
        await s.close();
        await s.close();
      });
    });
  });
}
