/**
 * Conformance: writing the "now" projection — `appendEvents` with belief changes, `replaceBeliefs` —
 * and reading it back whole with `currentBeliefs` (order, filters, namespaces, replaced values).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Replaced } from '../../../src/store/fact-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { beliefIds, changeOf, freshNamespace, freshTenant, heldAll, ids, makeEvent } from './helpers.ts';

/**
 * Declares the conformance tests of the belief projection: its writes and `currentBeliefs`.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function beliefsConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.appendEvents with belief changes', () => {
    it('applies changes pointing at events of the same call, keeping every field', async () => {
      const ns = freshNamespace();
      const name = makeEvent(ns, {
        subject: 'alice',
        predicate: 'name',
        value: 'Alice',
        valueKey: 'alice',
        kind: 'identity',
        confidence: 0.9,
        source: 'chat',
        evidence: 'she said so',
        observedAt: 1_700_000_000_123,
        recordedAt: 1_700_000_000_456,
      });
      const k1 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob', observedAt: 1000 });
      const k2 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol', observedAt: 2000 });
      const replaced: Replaced[] = [{ value: 'Alicia', observedAt: 500 }];
      await store.appendEvents(
        [name, k1, k2],
        [changeOf(ns, 'alice', 'name', [[name, replaced]]), changeOf(ns, 'alice', 'knows', [k1, k2])],
      );
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), [
        { event: k1, replaced: [] },
        { event: k2, replaced: [] },
        { event: name, replaced },
      ]);
    });

    it('leaves the beliefs alone when given no changes: the store computes none', async () => {
      const ns = freshNamespace();
      await store.appendEvents([makeEvent(ns, { value: 'red' })]);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), []);
      const held = makeEvent(ns, { value: 'green' });
      await store.appendEvents([held], [changeOf(ns, 'alice', 'favorite_color', [held])]);
      await store.appendEvents([makeEvent(ns, { value: 'blue' })]);
      await store.appendEvents([makeEvent(ns, { value: 'pink' })], []);
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), [held.id]);
    });

    it('a later change replaces every row of its fact (also with none) and no other fact', async () => {
      const ns = freshNamespace();
      const name = makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice', observedAt: 1000 });
      const blue = makeEvent(ns, { value: 'blue', observedAt: 1000 });
      const teal = makeEvent(ns, { value: 'teal', observedAt: 1500 });
      await store.appendEvents([name, blue, teal], heldAll([name, blue, teal]));
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), [
        blue.id,
        teal.id,
        name.id,
      ]);

      const red = makeEvent(ns, { value: 'red', observedAt: 2000 });
      const wasBlue = { value: 'blue', observedAt: 1000 };
      await store.appendEvents([red], [changeOf(ns, 'alice', 'favorite_color', [[red, [wasBlue]]])]);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, predicate: 'favorite_color', limit: 10 }), [
        { event: red, replaced: [wasBlue] },
      ]);

      const retract = makeEvent(ns, { value: null, valueKey: null, retraction: true, observedAt: 3000 });
      await store.appendEvents([retract], [changeOf(ns, 'alice', 'favorite_color', [])]);
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), [name.id]);
      assert.equal((await store.factEvents({ namespace: ns, maxGroups: 10 })).length, 5, 'events are all kept');
    });

    it('applies the changes of one call in order: a later change of the same fact wins', async () => {
      const ns = freshNamespace();
      const a = makeEvent(ns, { value: 'red' });
      const b = makeEvent(ns, { value: 'green' });
      await store.appendEvents(
        [a, b],
        [changeOf(ns, 'alice', 'favorite_color', [a]), changeOf(ns, 'alice', 'favorite_color', [b])],
      );
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), [b.id]);
    });

    it('is all or none: a failing batch applies none of its changes', async () => {
      const ns = freshNamespace();
      const existing = makeEvent(ns, { value: 'red' });
      await store.appendEvents([existing], heldAll([existing]));
      const fresh = makeEvent(ns, { value: 'green' });
      const other = makeEvent(ns, { subject: 'bob', value: 'teal' });
      await assert.rejects(
        store.appendEvents(
          [fresh, other, { ...existing, value: 'blue', valueKey: 'blue' }],
          [changeOf(ns, 'alice', 'favorite_color', [fresh]), changeOf(ns, 'bob', 'favorite_color', [other])],
        ),
      );
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), [{ event: existing, replaced: [] }]);
      assert.deepEqual(ids(await store.factEvents({ namespace: ns, maxGroups: 10 })), [existing.id]);
    });
  });

  describe('Store.replaceBeliefs', () => {
    it('replaces the beliefs of the named facts only, also with none', async () => {
      const ns = freshNamespace();
      const red = makeEvent(ns, { value: 'red', observedAt: 1000 });
      const green = makeEvent(ns, { value: 'green', observedAt: 2000 });
      const name = makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice' });
      const home = makeEvent(ns, { subject: 'bob', predicate: 'lives_in', value: 'rome' });
      await store.appendEvents([red, green, name, home], heldAll([green, name, home]));

      const wasGreen = { value: 'green', observedAt: 2000 };
      await store.replaceBeliefs([
        changeOf(ns, 'alice', 'favorite_color', [[red, [wasGreen]]]),
        changeOf(ns, 'bob', 'lives_in', []),
      ]);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), [
        { event: red, replaced: [wasGreen] },
        { event: name, replaced: [] },
      ]);
      await store.replaceBeliefs([]);
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), [red.id, name.id]);
      assert.equal((await store.factEvents({ namespace: ns, maxGroups: 10 })).length, 4, 'events are untouched');
    });

    it('sets the beliefs of imported events', async () => {
      const ns = freshNamespace();
      const events = [
        makeEvent(ns, { value: 'red', observedAt: 1000 }),
        makeEvent(ns, { value: 'teal', observedAt: 2000 }),
      ];
      await store.importEvents(events);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), []);
      await store.replaceBeliefs(heldAll(events));
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 10 })), ids(events));
    });

    it('touches only its namespace', async () => {
      const tenant = freshTenant();
      const nsA = `${tenant}:a`;
      const nsB = `${tenant}:b`;
      const inA = makeEvent(nsA, { value: 'red' });
      const inB = makeEvent(nsB, { value: 'red' });
      await store.appendEvents([inA, inB], heldAll([inA, inB]));
      await store.replaceBeliefs([changeOf(nsA, 'alice', 'favorite_color', [])]);
      assert.deepEqual(await store.currentBeliefs({ namespace: nsA, limit: 10 }), []);
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: nsB, limit: 10 })), [inB.id]);
    });
  });

  describe('Store.currentBeliefs', () => {
    it('returns beliefs in subject, predicate, observed_at order, whatever the write order', async () => {
      const ns = freshNamespace();
      const k3 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'dave', observedAt: 3000 });
      const k1 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob', observedAt: 1000 });
      const k2 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol', observedAt: 2000 });
      const aName = makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice', observedAt: 10 });
      const bName = makeEvent(ns, { subject: 'bob', predicate: 'name', value: 'Bob', observedAt: 5 });
      const cAge = makeEvent(ns, { subject: 'carol', predicate: 'age', value: 40, valueKey: '40', observedAt: 1 });
      await store.appendEvents([cAge, bName], heldAll([cAge, bName]));
      await store.appendEvents([k3, aName, k1], heldAll([k3, aName, k1]));
      await store.appendEvents([k2], [changeOf(ns, 'alice', 'knows', [k3, k2, k1])]);
      const ordered = [k1, k2, k3, aName, bName, cAge];
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 100 })), ids(ordered));
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 2 })), ids(ordered.slice(0, 2)));
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: ns, limit: 4 })), ids(ordered.slice(0, 4)));
    });

    it('filters by subject, predicate, kind and minConfidence (inclusive)', async () => {
      const ns = freshNamespace();
      const aName = makeEvent(ns, {
        subject: 'alice',
        predicate: 'name',
        value: 'Alice',
        kind: 'identity',
        confidence: 1,
      });
      const aColor = makeEvent(ns, {
        subject: 'alice',
        predicate: 'favorite_color',
        value: 'blue',
        kind: 'preference',
        confidence: 0.5,
      });
      const bName = makeEvent(ns, {
        subject: 'bob',
        predicate: 'name',
        value: 'Bob',
        kind: 'identity',
        confidence: 0.4,
      });
      const bColor = makeEvent(ns, { subject: 'bob', predicate: 'favorite_color', value: 'red', confidence: 0.8 });
      await store.appendEvents([aName, aColor, bName, bColor], heldAll([aName, aColor, bName, bColor]));
      const q = (over: object) => store.currentBeliefs({ namespace: ns, limit: 100, ...over }).then(beliefIds);
      assert.deepEqual(await q({ subject: 'alice' }), [aColor.id, aName.id]);
      assert.deepEqual(await q({ predicate: 'name' }), [aName.id, bName.id]);
      assert.deepEqual(await q({ subject: 'bob', predicate: 'favorite_color' }), [bColor.id]);
      assert.deepEqual(await q({ kind: 'identity' }), [aName.id, bName.id]);
      assert.deepEqual(await q({ kind: 'preference', subject: 'bob' }), []);
      assert.deepEqual(await q({ minConfidence: 0.5 }), [aColor.id, aName.id, bColor.id]);
      assert.deepEqual(await q({ minConfidence: 0.9, predicate: 'name' }), [aName.id]);
      assert.deepEqual(await q({ kind: 'identity', minConfidence: 0.5, subject: 'alice', predicate: 'name' }), [
        aName.id,
      ]);
      assert.deepEqual(await q({ subject: 'nobody' }), []);
    });

    it('never returns another namespace’s beliefs', async () => {
      const tenant = freshTenant();
      const nsA = `${tenant}:a`;
      const inA = makeEvent(nsA, { value: 'red' });
      const elsewhere = [`${tenant}:b`, `${tenant}:ab`, `${freshTenant()}:a`].map((ns) =>
        makeEvent(ns, { value: 'red' }),
      );
      await store.appendEvents([inA, ...elsewhere], heldAll([inA, ...elsewhere]));
      assert.deepEqual(beliefIds(await store.currentBeliefs({ namespace: nsA, limit: 100 })), [inA.id]);
      assert.deepEqual(
        beliefIds(
          await store.currentBeliefs({ namespace: nsA, subject: 'alice', predicate: 'favorite_color', limit: 100 }),
        ),
        [inA.id],
      );
      assert.deepEqual(await store.currentBeliefs({ namespace: `${tenant}:none`, limit: 100 }), []);
    });

    it('round-trips replaced values of every JSON type, most recent first', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns, { predicate: 'profile', value: { city: 'Oslo', tags: ['a'] }, valueKey: 'oslo' });
      const replaced: Replaced[] = [
        { value: 'Bergen', observedAt: 5000 },
        { value: 42, observedAt: 4000 },
        { value: false, observedAt: 3000 },
        { value: { city: 'Rome', nested: { n: 1.5, list: [1, 'two', null] } }, observedAt: 2000 },
        { value: ['x', 'y'], observedAt: 1_700_000_000_123 },
        { value: 'Zoë — “quoted” \\ back\nslash', observedAt: 0 },
      ];
      await store.appendEvents([e], [changeOf(ns, 'alice', 'profile', [[e, replaced]])]);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), [{ event: e, replaced }]);
      assert.deepEqual((await store.factHead(ns, 'alice', 'profile')).beliefs, [{ event: e, replaced }]);
    });
  });
}
