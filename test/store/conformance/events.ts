/**
 * Conformance: writing and reading raw events — `appendEvents`, `factEvents`, `groupEvents` and
 * `importEvents` (ids and fields kept verbatim, groups whole, batches atomic).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { newEventId } from '../../../src/common/ids.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace, groupOf, hitIds, ids, makeEvent, tenantOf } from './helpers.ts';

/**
 * Declares the conformance tests of the event log: append, fact/group reads and import.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function eventsConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.appendEvents + factEvents/groupEvents', () => {
    it('keeps every field of an event verbatim', async () => {
      const ns = freshNamespace();
      const events = [
        makeEvent(ns, {
          value: 'Blue',
          valueKey: 'blue',
          kind: 'preference',
          confidence: 0.75,
          source: 'chat',
          evidence: 'she said so',
          observedAt: 1_700_000_000_123,
          recordedAt: 1_700_000_000_456,
        }),
        makeEvent(ns, { predicate: 'open_issues', value: 42, valueKey: '42' }),
        makeEvent(ns, { predicate: 'ci_green', value: false, valueKey: 'false' }),
        makeEvent(ns, { value: 'Blue', valueKey: 'blue', retraction: true }),
        makeEvent(ns, {
          value: null,
          valueKey: null,
          retraction: true,
          actor: { tenant: tenantOf(ns), agent: null, session: null, keyId: null },
        }),
      ];
      await store.appendEvents(events);
      const back = await store.factEvents({ namespace: ns, maxGroups: 10 });
      const byId = new Map(back.map((e) => [e.id, e]));
      assert.equal(back.length, events.length);
      for (const e of events) assert.deepEqual(byId.get(e.id), e);
    });

    it('returns each group whole and contiguous, in insertion order', async () => {
      const ns = freshNamespace();
      // Inserted in the order e1, e2, e3: neither id order (e1 has the newest id) nor observed_at order.
      const e2 = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'rome', observedAt: 1000 });
      const e3 = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'oslo', observedAt: 2000 });
      const e1 = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'paris', observedAt: 3000 });
      await store.appendEvents([e1]);
      await store.appendEvents([makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' })]);
      await store.appendEvents([e2, makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob' })]);
      await store.importEvents([e3]);
      await store.appendEvents([makeEvent(ns, { subject: 'carol', predicate: 'name', value: 'Carol' })]);

      const all = await store.factEvents({ namespace: ns, maxGroups: 100 });
      assert.equal(all.length, 6);
      const order = all.map(groupOf);
      const seen = new Set<string>();
      order.forEach((g, i) => {
        if (i > 0 && order[i - 1] !== g) assert.ok(!seen.has(g), `group ${g} is split: ${order.join(', ')}`);
        seen.add(g);
      });
      assert.deepEqual([...seen].sort(), ['alice/knows', 'alice/name', 'bob/lives_in', 'carol/name']);
      const bob = all.filter((e) => e.subject === 'bob');
      assert.deepEqual(ids(bob), [e1.id, e2.id, e3.id]);
    });

    it('limits to maxGroups groups in subject, predicate order', async () => {
      const ns = freshNamespace();
      await store.appendEvents([
        makeEvent(ns, { subject: 'carol', predicate: 'name', value: 'Carol' }),
        makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' }),
        makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'paris' }),
        makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob' }),
        makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol' }),
      ]);
      const two = await store.factEvents({ namespace: ns, maxGroups: 2 });
      assert.deepEqual([...new Set(two.map(groupOf))].sort(), ['alice/knows', 'alice/name']);
      assert.equal(two.length, 3);
      const three = await store.factEvents({ namespace: ns, maxGroups: 3 });
      assert.deepEqual([...new Set(three.map(groupOf))].sort(), ['alice/knows', 'alice/name', 'bob/lives_in']);
    });

    it('filters by subject, by predicate, and by both', async () => {
      const ns = freshNamespace();
      await store.appendEvents([
        makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' }),
        makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob' }),
        makeEvent(ns, { subject: 'bob', predicate: 'name', value: 'Bob' }),
        makeEvent(ns, { subject: 'bob', predicate: 'knows', value: 'alice' }),
      ]);
      const alice = await store.factEvents({ namespace: ns, subject: 'alice', maxGroups: 10 });
      assert.deepEqual(alice.map(groupOf).sort(), ['alice/knows', 'alice/name']);
      const names = await store.factEvents({ namespace: ns, predicate: 'name', maxGroups: 10 });
      assert.deepEqual(names.map(groupOf).sort(), ['alice/name', 'bob/name']);
      const one = await store.factEvents({ namespace: ns, subject: 'bob', predicate: 'knows', maxGroups: 1 });
      assert.deepEqual(
        one.map((e) => e.value),
        ['alice'],
      );
      assert.deepEqual(await store.factEvents({ namespace: ns, subject: 'nobody', maxGroups: 10 }), []);
    });

    it('never returns another namespace’s events', async () => {
      const ns = freshNamespace();
      const other = `${tenantOf(ns)}:b`;
      const mine = makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' });
      await store.appendEvents([mine, makeEvent(other, { subject: 'alice', predicate: 'name', value: 'Eve' })]);
      assert.deepEqual(ids(await store.factEvents({ namespace: ns, maxGroups: 10 })), [mine.id]);
      assert.deepEqual(ids(await store.groupEvents(ns, [{ subject: 'alice', predicate: 'name' }])), [mine.id]);
    });

    it('groupEvents returns exactly the named groups, each in insertion order', async () => {
      const ns = freshNamespace();
      const a1 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob' });
      const b1 = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'paris' });
      const a2 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol' });
      const skip = makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' });
      const b2 = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'rome' });
      await store.appendEvents([a1, b1, a2, skip, b2]);
      const got = await store.groupEvents(ns, [
        { subject: 'bob', predicate: 'lives_in' },
        { subject: 'alice', predicate: 'knows' },
        { subject: 'nobody', predicate: 'knows' },
      ]);
      assert.equal(got.length, 4);
      assert.deepEqual(ids(got.filter((e) => e.subject === 'alice')), [a1.id, a2.id]);
      assert.deepEqual(ids(got.filter((e) => e.subject === 'bob')), [b1.id, b2.id]);
      assert.deepEqual(await store.groupEvents(ns, []), []);
    });

    it('appends a batch atomically: all or none', async () => {
      const ns = freshNamespace();
      const existing = makeEvent(ns, { value: 'red' });
      await store.appendEvents([existing]);
      const fresh = makeEvent(ns, { value: 'green' });
      await assert.rejects(store.appendEvents([fresh, { ...existing, value: 'blue', valueKey: 'blue' }]));
      assert.deepEqual(ids(await store.factEvents({ namespace: ns, maxGroups: 10 })), [existing.id]);
    });
  });

  describe('Store.existingEventIds', () => {
    it('names exactly the ids already stored', async () => {
      const ns = freshNamespace();
      const a = makeEvent(ns);
      const b = makeEvent(ns);
      await store.appendEvents([a]);
      const found = await store.existingEventIds([a.id, b.id]);
      assert.deepEqual([...found], [a.id]);
      assert.deepEqual([...(await store.existingEventIds([]))], []);
    });
  });

  describe('Store.importEvents', () => {
    it('keeps ids and every field, and returns how many it inserted', async () => {
      const ns = freshNamespace();
      const events = [
        makeEvent(ns, { id: newEventId(), value: 'red' }),
        makeEvent(ns, { id: newEventId(), value: 'green', evidence: 'imported' }),
      ];
      assert.equal(await store.importEvents(events), 2);
      assert.deepEqual(await store.factEvents({ namespace: ns, maxGroups: 10 }), events);
    });

    it('skips ids already present and counts only new ones', async () => {
      const ns = freshNamespace();
      const old = makeEvent(ns, { value: 'red' });
      await store.appendEvents([old]);
      const fresh = makeEvent(ns, { value: 'green' });
      const changed = { ...old, value: 'purple', valueKey: 'purple' };
      assert.equal(await store.importEvents([changed, fresh]), 1);
      const back = await store.factEvents({ namespace: ns, maxGroups: 10 });
      assert.deepEqual(back, [old, fresh], 'the stored copy of an existing id is left as it was');
      assert.equal(await store.importEvents([changed, fresh]), 0, 'a re-import inserts nothing');
      assert.equal(await store.importEvents([]), 0);
    });

    it('makes imported events searchable', async () => {
      const ns = freshNamespace();
      const word = `imp${randomBytes(5).toString('hex')}`;
      const e = makeEvent(ns, { evidence: `found ${word} here` });
      await store.importEvents([e]);
      assert.deepEqual(hitIds(await store.searchEvents(ns, [word], 10)), [e.id]);
    });
  });
}
