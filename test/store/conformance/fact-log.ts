/**
 * Conformance: the bounded log reads — `factLog` pages in fold order that chain to the end with no
 * gap or duplicate (across facts, ties of one ms, as_of), `countFactEvents` stopping past its cap,
 * and `factGroups` listing facts in order, filtered, and refusing (null) past `maxSteps`.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { compareEvents } from '../../../src/memory/fold.ts';
import type { FactKey, StoredEvent } from '../../../src/store/fact-store.ts';
import type { LogPosition } from '../../../src/store/log-reads.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace, ids, makeEvent } from './helpers.ts';

/** Every page of `groups` read `limit` at a time, following the last event of each page. */
async function allPages(
  store: Store,
  q: { namespace: string; groups: FactKey[]; asOf?: number },
  limit: number,
): Promise<StoredEvent[][]> {
  const pages: StoredEvent[][] = [];
  let after: LogPosition | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const page = await store.factLog({ ...q, after, limit });
    assert.ok(page.length <= limit, `a page holds at most ${limit}`);
    if (page.length === 0) return pages;
    pages.push(page);
    const last = page[page.length - 1] as StoredEvent;
    after = { ...last };
  }
  throw new Error('pages never ended');
}

/**
 * Declares the conformance tests of the bounded log reads.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function factLogConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.factLog', () => {
    it('pages two facts in fold order, ties of one ms included, with no gap or duplicate', async () => {
      const ns = freshNamespace();
      const at = Date.UTC(2026, 0, 1);
      const events: StoredEvent[] = [];
      for (let i = 0; i < 23; i++) {
        // Three events per ms, a retraction among them, inserted out of observed order.
        const observedAt = at + ((i * 7) % 8);
        const retraction = i % 5 === 0;
        events.push(
          makeEvent(ns, { subject: 'bob', predicate: 'note', value: `v${i}`, observedAt, retraction }),
          makeEvent(ns, { subject: 'amy', predicate: 'note', value: `w${i}`, observedAt }),
        );
      }
      events.push(makeEvent(ns, { subject: 'cat', predicate: 'note', value: 'not asked for' }));
      await store.appendEvents(events);
      const groups = [
        { subject: 'bob', predicate: 'note' },
        { subject: 'amy', predicate: 'note' },
      ];
      const expected = [
        ...events.filter((e) => e.subject === 'bob').sort(compareEvents),
        ...events.filter((e) => e.subject === 'amy').sort(compareEvents),
      ];
      for (const limit of [1, 4, 23, 100]) {
        const pages = await allPages(store, { namespace: ns, groups }, limit);
        assert.deepEqual(pages.flat(), expected, `limit ${limit}`);
      }
    });

    it('reads only events observed at or before as_of', async () => {
      const ns = freshNamespace();
      const events = [1000, 2000, 3000, 2000].map((observedAt, i) => makeEvent(ns, { value: `v${i}`, observedAt }));
      await store.appendEvents(events);
      const groups = [{ subject: 'alice', predicate: 'favorite_color' }];
      const page = await store.factLog({ namespace: ns, groups, asOf: 2000, limit: 10 });
      assert.deepEqual(ids(page), ids(events.filter((e) => e.observedAt <= 2000).sort(compareEvents)));
    });
  });

  describe('Store.countFactEvents', () => {
    it('counts the events of the facts as of a time, and stops past the cap', async () => {
      const ns = freshNamespace();
      const events = Array.from({ length: 12 }, (_, i) =>
        makeEvent(ns, { subject: i % 2 ? 'a' : 'b', predicate: 'note', value: `v${i}`, observedAt: 1000 + i }),
      );
      await store.appendEvents(events);
      const groups = [
        { subject: 'a', predicate: 'note' },
        { subject: 'b', predicate: 'note' },
        { subject: 'none', predicate: 'note' },
      ];
      assert.equal(await store.countFactEvents({ namespace: ns, groups, max: 100 }), 12);
      assert.equal(await store.countFactEvents({ namespace: ns, groups, asOf: 1005, max: 100 }), 6);
      assert.equal(await store.countFactEvents({ namespace: ns, groups, max: 7 }), 8);
      assert.equal(await store.countFactEvents({ namespace: ns, groups: [], max: 7 }), 0);
    });
  });

  describe('Store.factGroups', () => {
    it('lists facts in subject, predicate order, filtered, and null past maxSteps', async () => {
      const ns = freshNamespace();
      const facts = [
        ['bob', 'note'],
        ['amy', 'role'],
        ['amy', 'note'],
        ['cat', 'role'],
      ];
      const events = facts.flatMap(([subject, predicate]) =>
        [1, 2, 3].map((i) => makeEvent(ns, { subject, predicate, value: `v${i}` })),
      );
      await store.appendEvents(events);
      const list = (q: { subject?: string; predicate?: string; limit?: number; maxSteps?: number }) =>
        store.factGroups({ namespace: ns, limit: 10, maxSteps: 100, ...q });
      const key = (subject: string, predicate: string) => ({ subject, predicate });
      assert.deepEqual(await list({}), [
        key('amy', 'note'),
        key('amy', 'role'),
        key('bob', 'note'),
        key('cat', 'role'),
      ]);
      assert.deepEqual(await list({ limit: 2 }), [key('amy', 'note'), key('amy', 'role')]);
      assert.deepEqual(await list({ subject: 'amy' }), [key('amy', 'note'), key('amy', 'role')]);
      assert.deepEqual(await list({ predicate: 'role' }), [key('amy', 'role'), key('cat', 'role')]);
      assert.deepEqual(await list({ subject: 'nobody' }), []);
      assert.equal(await list({ predicate: 'role', maxSteps: 2 }), null);
      assert.deepEqual(await list({ limit: 2, maxSteps: 2 }), [key('amy', 'note'), key('amy', 'role')]);
    });
  });
}
