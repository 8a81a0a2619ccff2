/**
 * Conformance: `writeFacts`, the one store operation of a fact write — heads read in request order,
 * reads of the locked facts through the transaction, all or nothing, and two writes of one fact
 * serialised (the second plans from what the first committed), while writes of other facts go on.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { FactHead } from '../../../src/store/fact-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { beliefIds, changeOf, freshNamespace, heldAll, ids, makeEvent } from './helpers.ts';

/**
 * Declares the conformance tests of `writeFacts`.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function writeFactsConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.writeFacts', () => {
    it('gives the heads in request order, lets the plan read the fact, and appends what it returns', async () => {
      const ns = freshNamespace();
      const old = makeEvent(ns, { value: 'red', observedAt: 1000 });
      const other = makeEvent(ns, { subject: 'bob', value: 'teal', observedAt: 500 });
      await store.appendEvents([old, other], heldAll([old, other]));
      const next = makeEvent(ns, { value: 'green', observedAt: 2000 });
      const result = await store.writeFacts(
        {
          heads: [
            { namespace: ns, subject: 'bob', predicate: 'favorite_color' },
            { namespace: ns, subject: 'alice', predicate: 'favorite_color', valueKey: 'red' },
            { namespace: ns, subject: 'nobody', predicate: 'favorite_color' },
          ],
        },
        async (heads, tx) => {
          assert.deepEqual(
            heads.map((h) => [beliefIds(h.beliefs), h.lastObservedAt]),
            [
              [[other.id], 500],
              [[old.id], 1000],
              [[], null],
            ],
          );
          assert.deepEqual(ids(await tx.groupEvents(ns, [{ subject: 'alice', predicate: 'favorite_color' }])), [
            old.id,
          ]);
          assert.deepEqual(await tx.existingEventIds([old.id, next.id]), new Set([old.id]));
          assert.deepEqual(beliefIds((await tx.factHead(ns, 'alice', 'favorite_color')).beliefs), [old.id]);
          return {
            events: [next],
            changes: [changeOf(ns, 'alice', 'favorite_color', [[next, [{ value: 'red', observedAt: 1000 }]]])],
            result: 'done',
          };
        },
      );
      assert.equal(result, 'done');
      assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), {
        beliefs: [{ event: next, replaced: [{ value: 'red', observedAt: 1000 }] }],
        lastObservedAt: 2000,
        lastRetractionAt: null,
      });
    });

    it('writes nothing when the plan throws', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns);
      await assert.rejects(
        store.writeFacts({ heads: [{ namespace: ns, subject: 'alice', predicate: 'favorite_color' }] }, async () => {
          throw new Error('plan failed');
        }),
        /plan failed/,
      );
      // A failing append (a duplicate id) leaves no part of the write either.
      await store.appendEvents([e]);
      const fresh = makeEvent(ns, { value: 'red' });
      await assert.rejects(
        store.writeFacts({ heads: [] }, async () => ({ events: [fresh, e], changes: heldAll([fresh]), result: 0 })),
      );
      assert.deepEqual(ids(await store.exportEvents({ namespace: ns, limit: 10 })), [e.id]);
      assert.deepEqual(await store.currentBeliefs({ namespace: ns, limit: 10 }), []);
    });

    it('serialises writes of one fact: the second plans from what the first committed', async () => {
      const ns = freshNamespace();
      const fact = { namespace: ns, subject: 'alice', predicate: 'favorite_color' };
      const seen: FactHead[] = [];
      // Each write appends one value that replaces whatever its heads showed.
      const write = (value: string) =>
        store.writeFacts({ heads: [fact] }, async ([head]) => {
          seen.push(head as FactHead);
          // Give the other write every chance to read the same (stale) head meanwhile.
          await new Promise((r) => setImmediate(r));
          const e = makeEvent(ns, { value });
          return { events: [e], changes: [changeOf(ns, 'alice', 'favorite_color', [e])], result: e };
        });
      const [a, b] = await Promise.all([write('red'), write('blue')]);
      const heads = seen.map((h) => beliefIds(h.beliefs));
      // Whichever ran first saw nothing; the other saw exactly the first one's value.
      assert.deepEqual(
        heads.sort((x, y) => x.length - y.length),
        [[], [heads[1]?.[0]]],
      );
      assert.ok([a.id, b.id].includes(heads[1]?.[0] as string));
      assert.equal((await store.currentBeliefs({ namespace: ns, limit: 10 })).length, 1);
    });
  });
}
