/**
 * @module
 * The `SessionStore` conformance suite: the memory and Redis stores must both pass it.
 * `sessionStoreConformance(name, open)` registers one `describe` per capability; each test opens a fresh
 * store (or one with its own key prefix) through the factory, with a ManualClock deciding expiry, and closes it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import type { InstanceRecord, SessionRecord, SessionStore } from '../../src/sessions/session-store.ts';

/** Opens a fresh, empty store (or one with a unique key prefix) whose notion of now is `clock`. */
export type StoreFactory = (clock: ManualClock) => Promise<SessionStore>;

const T0 = Date.UTC(2026, 0, 1);

function record(over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: `id_${randomUUID()}`,
    service: 'svc-a',
    instance: `svc-a-${randomUUID().slice(0, 5)}`,
    claim: 'svc-a-0123456789',
    state: 'idle',
    createdAt: T0,
    lastActive: T0,
    idleAt: null,
    expiresAt: null,
    gateway: 'gw-1',
    ...over,
  };
}

function instance(over: Partial<InstanceRecord> = {}): InstanceRecord {
  return {
    name: `svc-a-${randomUUID().slice(0, 5)}`,
    service: 'svc-a',
    state: 'running',
    pid: 4242,
    incarnation: '123456',
    host: '127.0.0.1',
    port: 40001,
    warm: false,
    gateway: 'gw-1',
    ...over,
  };
}

async function withStore(open: StoreFactory, fn: (s: SessionStore, clock: ManualClock) => Promise<void>) {
  const clock = new ManualClock(T0);
  const store = await open(clock);
  try {
    await store.ready();
    await fn(store, clock);
  } finally {
    await store.close();
  }
}

/** Registers the conformance suite for one store. */
export function sessionStoreConformance(name: string, open: StoreFactory): void {
  describe(`SessionStore conformance: ${name}`, () => {
    describe('bind/get', () => {
      it('binds a new session and returns it field for field', () =>
        withStore(open, async (s) => {
          const r = record({ expiresAt: T0 + 9_000, idleAt: T0 + 5_000, state: 'paused' });
          assert.deepEqual(await s.bind(r, 1), { outcome: 'bound', record: r });
          assert.deepEqual(await s.get(r.service, r.id), r);
        }));
      it('keeps the first binding of a session: a second bind gets it back as exists', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.bind(r, 10);
          const other = { ...r, instance: 'svc-a-zzzzz', gateway: 'gw-2' };
          assert.deepEqual(await s.bind(other, 10), { outcome: 'exists', record: r });
          assert.equal((await s.get(r.service, r.id))?.instance, r.instance);
        }));
      it('gives an instance at most target sessions', () =>
        withStore(open, async (s) => {
          const a = record();
          const b = record({ instance: a.instance });
          assert.equal((await s.bind(a, 1)).outcome, 'bound');
          assert.deepEqual(await s.bind(b, 1), { outcome: 'full' });
          assert.equal(await s.get(b.service, b.id), undefined);
          assert.equal((await s.bind(b, 2)).outcome, 'bound');
        }));
      it('returns undefined for an unknown id and keeps services apart', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.bind(r, 1);
          assert.equal(await s.get('svc-b', r.id), undefined);
          assert.equal(await s.get(r.service, 'nope'), undefined);
        }));
      it('returned records are copies', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.bind(r, 1);
          const got = await s.get(r.service, r.id);
          if (got) got.instance = 'mutated';
          const inst = r.instance;
          r.instance = 'mutated-too';
          assert.equal((await s.get(r.service, r.id))?.instance, inst);
        }));
    });

    describe('concurrent bind', () => {
      it('of one session from many callers at once: exactly one binding holds, everyone sees it', () =>
        withStore(open, async (s) => {
          const id = `id_${randomUUID()}`;
          const tries = Array.from({ length: 20 }, (_, i) =>
            record({ id, instance: `svc-a-i${i}`, gateway: `gw-${i}` }),
          );
          const results = await Promise.all(tries.map((r) => s.bind(r, 1)));
          const bound = results.filter((r) => r.outcome === 'bound');
          assert.equal(bound.length, 1);
          const winner = (bound[0] as { record: SessionRecord }).record;
          for (const r of results) if (r.outcome === 'exists') assert.deepEqual(r.record, winner);
          assert.deepEqual(await s.get('svc-a', id), winner);
        }));
      it('of many sessions onto one target-1 instance at once: exactly one gets it', () =>
        withStore(open, async (s) => {
          const inst = `svc-a-${randomUUID().slice(0, 5)}`;
          const results = await Promise.all(Array.from({ length: 20 }, () => s.bind(record({ instance: inst }), 1)));
          assert.equal(results.filter((r) => r.outcome === 'bound').length, 1);
          assert.equal(results.filter((r) => r.outcome === 'full').length, 19);
        }));
    });

    describe('expiry', () => {
      it('a session past expiresAt is gone from get and list, and its id may be bound again', () =>
        withStore(open, async (s, clock) => {
          const r = record({ expiresAt: T0 + 1_000 });
          await s.bind(r, 1);
          clock.advance(999);
          assert.ok(await s.get(r.service, r.id));
          clock.advance(1);
          assert.equal(await s.get(r.service, r.id), undefined);
          assert.ok(!(await s.list(r.service)).some((x) => x.id === r.id));
          const again = { ...r, instance: 'svc-a-newer', expiresAt: T0 + 5_000 };
          assert.equal((await s.bind(again, 1)).outcome, 'bound');
          assert.equal((await s.get(r.service, r.id))?.instance, 'svc-a-newer');
        }));
      it('an expired session no longer counts against its instance target', () =>
        withStore(open, async (s, clock) => {
          const a = record({ expiresAt: T0 + 1_000 });
          const b = record({ instance: a.instance });
          await s.bind(a, 1);
          assert.equal((await s.bind(b, 1)).outcome, 'full');
          clock.advance(1_000);
          assert.equal((await s.bind(b, 1)).outcome, 'bound');
        }));
    });

    describe('touch', () => {
      it('changes state, lastActive and idleAt only', () =>
        withStore(open, async (s) => {
          const r = record({ idleAt: T0 + 10 });
          await s.bind(r, 1);
          await s.touch(r.service, r.id, { state: 'active', lastActive: T0 + 5_000, idleAt: T0 + 65_000 });
          assert.deepEqual(await s.get(r.service, r.id), {
            ...r,
            state: 'active',
            lastActive: T0 + 5_000,
            idleAt: T0 + 65_000,
          });
        }));
      it('does nothing for an unknown id', () =>
        withStore(open, async (s) => {
          await s.touch('svc-a', 'ghost', { state: 'active' });
          assert.equal(await s.get('svc-a', 'ghost'), undefined);
        }));
    });

    describe('end', () => {
      it('removes the record, frees its place on the instance, and says whether one existed', () =>
        withStore(open, async (s) => {
          const r = record();
          await s.bind(r, 1);
          assert.equal(await s.end(r.service, r.id), true);
          assert.equal(await s.get(r.service, r.id), undefined);
          assert.equal(await s.end(r.service, r.id), false);
          assert.equal((await s.bind(record({ instance: r.instance }), 1)).outcome, 'bound');
        }));

      it('with a binding, ends only that one (same instance and createdAt), not one made since', () =>
        withStore(open, async (s) => {
          const first = record();
          await s.bind(first, 1);
          await s.end(first.service, first.id);
          const since = record({ id: first.id, gateway: 'gw-2', createdAt: T0 + 1 });
          await s.bind(since, 1);
          assert.equal(await s.end(first.service, first.id, first), false);
          assert.equal(await s.end(first.service, first.id, { instance: since.instance, createdAt: T0 }), false);
          assert.deepEqual(await s.get(since.service, since.id), since);
          assert.deepEqual(
            (await s.list()).map((r) => r.id),
            [since.id],
          );
          assert.equal(await s.end(since.service, since.id, since), true);
          assert.equal(await s.get(since.service, since.id), undefined);
          assert.equal((await s.bind(record({ instance: since.instance }), 1)).outcome, 'bound');
        }));
    });

    describe('list', () => {
      it('lists live records, or one service, ordered by createdAt', () =>
        withStore(open, async (s) => {
          const a = record({ createdAt: T0 + 3 });
          const b = record({ createdAt: T0 + 1, service: 'svc-b' });
          const c = record({ createdAt: T0 + 2 });
          for (const r of [a, b, c]) await s.bind(r, 1);
          const mine = new Set([a.id, b.id, c.id]);
          assert.deepEqual(
            (await s.list()).filter((r) => mine.has(r.id)).map((r) => r.id),
            [b.id, c.id, a.id],
          );
          assert.deepEqual(
            (await s.list('svc-a')).filter((r) => mine.has(r.id)).map((r) => r.id),
            [c.id, a.id],
          );
        }));
    });

    describe('instances', () => {
      it('puts, replaces, lists and deletes instance records', () =>
        withStore(open, async (s) => {
          const a = instance({ name: 'svc-a-aaaaa', warm: true, state: 'paused' });
          const b = instance({ name: 'svc-a-bbbbb', pid: null, incarnation: null });
          const c = instance({ name: 'svc-c-ccccc', service: 'svc-c' });
          for (const r of [b, a, c]) await s.putInstance(r);
          assert.deepEqual(await s.listInstances('svc-a'), [a, b]);
          await s.putInstance({ ...a, warm: false, state: 'running' });
          assert.deepEqual((await s.listInstances('svc-a'))[0], { ...a, warm: false, state: 'running' });
          await s.deleteInstance('svc-a', a.name);
          assert.deepEqual(
            (await s.listInstances()).map((r) => r.name),
            [b.name, c.name],
          );
        }));
    });

    describe('close', () => {
      it('can be called twice', async () => {
        const s = await open(new ManualClock(T0));
        await s.close();
        await s.close();
      });
    });
  });
}
