/**
 * Conformance: `exportEvents` (the store's `exportOrder`, paging, namespace/tenant/global scope) and `purgeNamespace`
 * (erases one namespace's events and beliefs, nothing else, and leaves it writable).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { TetherError } from '../../../src/common/errors.ts';
import { newEventId } from '../../../src/common/ids.ts';
import type { Store } from '../../../src/store/store.ts';
import { beliefIds, changeOf, freshNamespace, freshTenant, heldAll, ids, makeEvent, tenantOf } from './helpers.ts';

/**
 * Declares the conformance tests of export and purge.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function exportPurgeConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.exportEvents', () => {
    it('returns one namespace in the store’s export order, whatever the id order', async () => {
      const ns = freshNamespace();
      const a = makeEvent(ns, { id: newEventId(), value: 'a' });
      const b = makeEvent(ns, { id: newEventId(), value: 'b' });
      const c = makeEvent(ns, { id: newEventId(), value: 'c' });
      await store.importEvents([c, a]);
      await store.importEvents([b]);
      await store.appendEvents([makeEvent(`${tenantOf(ns)}:other`, { value: 'x' })]);
      // Id order, or commit order (each transaction's events in insertion order).
      const expected = store.exportOrder === 'id' ? [a, b, c] : [c, a, b];
      assert.deepEqual(await store.exportEvents({ namespace: ns, limit: 100 }), expected);
    });

    it('goes on after since in export order when a lower id commits later', async () => {
      const ns = freshNamespace();
      const first = makeEvent(ns, { value: 'first' });
      const [early, late] = [newEventId(), newEventId()].sort();
      const lateEvent = makeEvent(ns, { id: late as string, value: 'late id, first commit' });
      const earlyEvent = makeEvent(ns, { id: early as string, value: 'early id, second commit' });
      await store.appendEvents([first]);
      await store.appendEvents([lateEvent]);
      const seen = await store.exportEvents({ namespace: ns, since: first.id, limit: 100 });
      assert.deepEqual(ids(seen), [lateEvent.id]);
      await store.appendEvents([earlyEvent]);
      const next = await store.exportEvents({ namespace: ns, since: lateEvent.id, limit: 100 });
      // An id-order store pages on ids: its one writer never commits a lower id after a higher one
      // (only an import of old ids can, and an incremental export does not follow imports).
      assert.deepEqual(ids(next), store.exportOrder === 'id' ? [] : [earlyEvent.id]);
    });

    it('answers a since that names no stored event as the export order allows', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns, { value: 'v' });
      await store.appendEvents([e]);
      const unknown = newEventId();
      if (store.exportOrder === 'id') {
        assert.deepEqual(await store.exportEvents({ namespace: ns, since: unknown, limit: 10 }), []);
        return;
      }
      await assert.rejects(store.exportEvents({ namespace: ns, since: unknown, limit: 10 }), (err: TetherError) => {
        assert.equal(err.code, 'invalid_request');
        assert.equal(err.field, 'since');
        return true;
      });
    });

    it('pages with since and limit', async () => {
      const ns = freshNamespace();
      const events = Array.from({ length: 5 }, (_, i) => makeEvent(ns, { value: `v${i}` }));
      await store.appendEvents(events);
      const first = await store.exportEvents({ namespace: ns, limit: 2 });
      assert.deepEqual(ids(first), ids(events.slice(0, 2)));
      const second = await store.exportEvents({ namespace: ns, since: first[1]?.id, limit: 2 });
      assert.deepEqual(ids(second), ids(events.slice(2, 4)));
      const third = await store.exportEvents({ namespace: ns, since: second[1]?.id, limit: 2 });
      assert.deepEqual(ids(third), ids(events.slice(4)));
      assert.deepEqual(await store.exportEvents({ namespace: ns, since: third[0]?.id, limit: 2 }), []);
    });

    it('scopes to a tenant: all its namespaces and no other tenant', async () => {
      const tenant = freshTenant();
      const other = freshTenant();
      const a = makeEvent(`${tenant}:a`, { value: 'a' });
      const b = makeEvent(`${tenant}:b`, { value: 'b' });
      const x = makeEvent(`${other}:a`, { value: 'x' });
      await store.appendEvents([a, x, b]);
      assert.deepEqual(ids(await store.exportEvents({ tenant, limit: 100 })), [a.id, b.id]);
      assert.deepEqual(ids(await store.exportEvents({ tenant: other, limit: 100 })), [x.id]);
      assert.deepEqual(ids(await store.exportEvents({ tenant, since: a.id, limit: 100 })), [b.id]);
    });

    it('exports every namespace when no scope is given', async () => {
      // The cursor: an event committed before a and b (for an id-order store, any id before theirs).
      const marker = makeEvent(freshNamespace(), { value: 'marker' });
      await store.appendEvents([marker]);
      const a = makeEvent(freshNamespace(), { value: 'a' });
      const b = makeEvent(freshNamespace(), { value: 'b' });
      await store.appendEvents([b, a]);
      const got = await store.exportEvents({ since: marker.id, limit: 100_000 });
      const mine = got.filter((e) => e.id === a.id || e.id === b.id);
      if (store.exportOrder === 'id') {
        assert.deepEqual(
          mine,
          [a, b].sort((x, y) => (x.id < y.id ? -1 : 1)),
        );
        assert.deepEqual(ids(got), ids(got).sort(), 'id order');
      } else {
        assert.deepEqual(mine, [b, a], 'commit order, a transaction’s events as written');
      }
      assert.equal(got.length, new Set(ids(got)).size, 'no event twice');
    });
  });

  describe('Store.purgeNamespace', () => {
    it('erases one namespace, returns the count, and leaves the others untouched', async () => {
      const tenant = freshTenant();
      const gone = `${tenant}:a`;
      const sibling = `${tenant}:b`;
      const foreign = `${freshTenant()}:a`;
      const w = `purge${randomBytes(4).toString('hex')}`;
      const doomed = [
        makeEvent(gone, { value: `${w} one` }),
        makeEvent(gone, { subject: 'bob', value: `${w} two` }),
        makeEvent(gone, { subject: 'carol', value: null, valueKey: null, retraction: true }),
      ];
      const kept = [makeEvent(sibling, { value: `${w} one` }), makeEvent(foreign, { value: `${w} one` })];
      await store.appendEvents(
        [...doomed, ...kept],
        [
          changeOf(gone, 'alice', 'favorite_color', [[doomed[0]!, [{ value: `${w} zero`, observedAt: 1 }]]]),
          changeOf(gone, 'bob', 'favorite_color', [doomed[1]!]),
          ...heldAll(kept),
        ],
      );
      assert.equal(await store.countEvents(gone), 3);

      assert.equal(await store.purgeNamespace(gone), 3);

      assert.equal(await store.countEvents(gone), 0);
      assert.equal(await store.countEvents(sibling), 1);
      assert.deepEqual(await store.factEvents({ namespace: gone, maxGroups: 10 }), []);
      assert.deepEqual(await store.groupEvents(gone, [{ subject: 'alice', predicate: 'favorite_color' }]), []);
      assert.deepEqual(await store.exportEvents({ namespace: gone, limit: 100 }), []);
      assert.deepEqual(await store.searchEvents(gone, [w], 10), []);
      assert.deepEqual(await store.factEvents({ namespace: sibling, maxGroups: 10 }), [kept[0]]);
      assert.deepEqual(await store.factEvents({ namespace: foreign, maxGroups: 10 }), [kept[1]]);
      assert.deepEqual(
        (await store.searchEvents(sibling, [w], 10)).map((h) => h.eventId),
        [kept[0]?.id],
      );
      assert.deepEqual(ids(await store.exportEvents({ tenant, limit: 100 })), [kept[0]?.id]);

      // The "now" projection goes with the events.
      assert.deepEqual(await store.currentBeliefs({ namespace: gone, limit: 100 }), []);
      assert.deepEqual(await store.searchBeliefs({ namespace: gone, terms: [w], limit: 10 }), []);
      assert.deepEqual(await store.factHead(gone, 'alice', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: null,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.factHead(gone, 'carol', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: null,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.factKeys(tenant, 'favorite_color'), [{ namespace: sibling, subject: 'alice' }]);
      assert.deepEqual(await store.currentBeliefs({ namespace: sibling, limit: 100 }), [
        { event: kept[0], replaced: [] },
      ]);
      assert.deepEqual(await store.currentBeliefs({ namespace: foreign, limit: 100 }), [
        { event: kept[1], replaced: [] },
      ]);
      assert.deepEqual(beliefIds(await store.searchBeliefs({ namespace: sibling, terms: [w], limit: 10 })), [
        kept[0]?.id,
      ]);
    });

    it('leaves no belief behind: re-importing the erased events brings back no beliefs', async () => {
      const ns = freshNamespace();
      const events = [makeEvent(ns, { value: 'red' }), makeEvent(ns, { subject: 'bob', value: 'teal' })];
      await store.appendEvents(events, heldAll(events));
      assert.equal(await store.purgeNamespace(ns), 2);
      // Same ids again (a restore from an export): the store computes no beliefs, so any found
      // now would be rows the purge left behind.
      assert.equal(await store.importEvents(events), 2);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), []);
      assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: events[0]?.observedAt,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.searchBeliefs({ namespace: ns, terms: ['teal'], limit: 10 }), []);
    });

    it('returns 0 for a namespace with no events, and a second purge finds nothing', async () => {
      const ns = freshNamespace();
      assert.equal(await store.purgeNamespace(ns), 0);
      await store.appendEvents([makeEvent(ns)]);
      assert.equal(await store.purgeNamespace(ns), 1);
      assert.equal(await store.purgeNamespace(ns), 0);
    });

    it('lets the namespace be written again afterwards', async () => {
      const ns = freshNamespace();
      const old = makeEvent(ns, { value: 'old', observedAt: 5000 });
      await store.appendEvents([old], heldAll([old]));
      await store.purgeNamespace(ns);
      const fresh = makeEvent(ns, { value: 'new', observedAt: 1000 });
      await store.appendEvents([fresh], heldAll([fresh]));
      assert.deepEqual(await store.factEvents({ namespace: ns, maxGroups: 10 }), [fresh]);
      assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), {
        beliefs: [{ event: fresh, replaced: [] }],
        lastObservedAt: 1000,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.searchBeliefs({ namespace: ns, terms: ['old'], limit: 10 }), []);
      assert.deepEqual(
        (await store.searchEvents(ns, ['new'], 10)).map((h) => h.eventId),
        [fresh.id],
      );
      assert.deepEqual(await store.searchEvents(ns, ['old'], 10), []);
    });
  });
}
