/**
 * Conformance: targeted reads of the "now" projection — `searchBeliefs`, `factHead` (beliefs and the
 * latest observed time of one fact) and `factKeys` (which subjects of a tenant use a predicate).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { words } from '../../../src/common/words.ts';
import type { StoredEvent } from '../../../src/store/fact-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { beliefIds, changeOf, freshNamespace, freshTenant, heldAll, ids, makeEvent } from './helpers.ts';

/**
 * Declares the conformance tests of lookups in the belief projection: `searchBeliefs`, `factHead`, `factKeys`.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function beliefsLookupConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.searchBeliefs', () => {
    const marker = (): string => `sb${randomBytes(4).toString('hex')}`;

    it('returns only assertions that are current beliefs, with what they replaced', async () => {
      const ns = freshNamespace();
      const w = marker();
      const old = makeEvent(ns, { subject: 'alice', predicate: 'drinks', value: `green tea ${w}`, observedAt: 1000 });
      const now = makeEvent(ns, { subject: 'alice', predicate: 'drinks', value: `black tea ${w}`, observedAt: 2000 });
      const retraction = makeEvent(ns, {
        subject: 'bob',
        predicate: 'drinks',
        value: `tea ${w}`,
        retraction: true,
        evidence: `no more ${w}`,
        observedAt: 3000,
      });
      const unheld = makeEvent(ns, { subject: 'carol', predicate: 'drinks', value: `tea ${w}`, observedAt: 4000 });
      const wasGreen = { value: `green tea ${w}`, observedAt: 1000 };
      await store.appendEvents([old], [changeOf(ns, 'alice', 'drinks', [old])]);
      await store.appendEvents(
        [now, retraction, unheld],
        [changeOf(ns, 'alice', 'drinks', [[now, [wasGreen]]]), changeOf(ns, 'bob', 'drinks', [])],
      );
      assert.deepEqual(await store.searchBeliefs({ namespace: ns, terms: [w], limit: 10 }), [
        { event: now, replaced: [wasGreen] },
      ]);
      assert.deepEqual(await store.searchBeliefs({ namespace: ns, terms: ['green', w], limit: 10 }), []);
      assert.equal((await store.searchEvents(ns, [w], 10)).length, 4, 'searchEvents still sees every event');
    });

    it('requires every term to match', async () => {
      const ns = freshNamespace();
      const tea = makeEvent(ns, { subject: 'alice', predicate: 'prefers', value: 'green tea' });
      const coffee = makeEvent(ns, { subject: 'alice', predicate: 'likes', value: 'black coffee', evidence: 'Café' });
      await store.appendEvents([tea, coffee], heldAll([tea, coffee]));
      const search = (terms: string[]) => store.searchBeliefs({ namespace: ns, terms, limit: 10 }).then(beliefIds);
      assert.deepEqual(await search(['alice', 'tea']), [tea.id]);
      assert.deepEqual((await search(['alice'])).sort(), [tea.id, coffee.id].sort());
      assert.deepEqual(await search(words('Black CAFÉ')), [coffee.id]);
      assert.deepEqual(await search(['alice', 'tea', 'coffee']), []);
      assert.deepEqual(await search(['nothingmatchesthis']), []);
    });

    it('returns beliefs newest first (not by relevance), at most limit', async () => {
      const ns = freshNamespace();
      const w = marker();
      const written: StoredEvent[] = [];
      // Oldest first: the first is all about the word, so a ranking would put it first.
      const strong = makeEvent(ns, {
        subject: w,
        predicate: 'note',
        value: `${w} ${w} ${w}`,
        evidence: w,
        observedAt: 1000,
      });
      written.push(strong);
      await store.appendEvents([strong], heldAll([strong]));
      for (let i = 0; i < 4; i++) {
        const e = makeEvent(ns, {
          subject: `person ${i}`,
          predicate: 'note',
          value: `a long note where ${w} is mentioned once among plenty of other words ${i}`,
          observedAt: 2000 + i,
        });
        written.push(e);
        await store.appendEvents([e], heldAll([e]));
      }
      const newestFirst = ids(written).reverse();
      const search = (limit: number) => store.searchBeliefs({ namespace: ns, terms: [w], limit }).then(beliefIds);
      assert.deepEqual(await search(50), newestFirst);
      assert.deepEqual(await search(2), newestFirst.slice(0, 2));
      assert.deepEqual(await search(1), newestFirst.slice(0, 1));
    });

    it('filters by subject, predicate, kind and minConfidence', async () => {
      const ns = freshNamespace();
      const w = marker();
      const aNote = makeEvent(ns, {
        subject: 'alice',
        predicate: 'note',
        value: w,
        kind: 'fact',
        confidence: 0.9,
        observedAt: 1,
      });
      const aLike = makeEvent(ns, {
        subject: 'alice',
        predicate: 'likes',
        value: w,
        kind: 'preference',
        confidence: 0.5,
        observedAt: 2,
      });
      const bNote = makeEvent(ns, {
        subject: 'bob',
        predicate: 'note',
        value: w,
        kind: 'fact',
        confidence: 0.3,
        observedAt: 3,
      });
      await store.appendEvents([aNote, aLike, bNote], heldAll([aNote, aLike, bNote]));
      const q = (over: object) =>
        store.searchBeliefs({ namespace: ns, terms: [w], limit: 10, ...over }).then(beliefIds);
      assert.deepEqual(await q({}), [bNote.id, aLike.id, aNote.id]);
      assert.deepEqual(await q({ subject: 'alice' }), [aLike.id, aNote.id]);
      assert.deepEqual(await q({ predicate: 'note' }), [bNote.id, aNote.id]);
      assert.deepEqual(await q({ subject: 'alice', predicate: 'note' }), [aNote.id]);
      assert.deepEqual(await q({ kind: 'fact' }), [bNote.id, aNote.id]);
      assert.deepEqual(await q({ minConfidence: 0.5 }), [aLike.id, aNote.id]);
      assert.deepEqual(await q({ kind: 'fact', minConfidence: 0.5 }), [aNote.id]);
      assert.deepEqual(await q({ subject: 'carol' }), []);
    });

    it('never returns another namespace’s beliefs, even with the same words', async () => {
      const tenant = freshTenant();
      const nsA = `${tenant}:a`;
      const w = marker();
      const inA = makeEvent(nsA, { value: `${w} words`, observedAt: 1000 });
      // Written after A's, with the same fact and words: newest first would list them first.
      const elsewhere = [`${tenant}:b`, `${tenant}:ab`, `${freshTenant()}:a`].map((ns) =>
        makeEvent(ns, { value: `${w} words`, observedAt: 2000 }),
      );
      await store.appendEvents([inA, ...elsewhere], heldAll([inA, ...elsewhere]));
      assert.deepEqual(beliefIds(await store.searchBeliefs({ namespace: nsA, terms: [w, 'words'], limit: 1 })), [
        inA.id,
      ]);
      assert.deepEqual(beliefIds(await store.searchBeliefs({ namespace: nsA, terms: [w], limit: 10 })), [inA.id]);
      assert.deepEqual(await store.searchBeliefs({ namespace: `${tenant}:none`, terms: [w], limit: 10 }), []);
    });
  });

  describe('Store.factHead', () => {
    it('gives no beliefs and a null time for an unknown fact', async () => {
      const ns = freshNamespace();
      const red = makeEvent(ns, { value: 'red' });
      await store.appendEvents([red], heldAll([red]));
      assert.deepEqual(await store.factHead(ns, 'alice', 'name'), {
        beliefs: [],
        lastObservedAt: null,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.factHead(ns, 'nobody', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: null,
        lastRetractionAt: null,
      });
      assert.deepEqual(await store.factHead(freshNamespace(), 'alice', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: null,
        lastRetractionAt: null,
      });
    });

    it('gives the fact’s beliefs and the latest observed_at of all its events', async () => {
      const tenant = freshTenant();
      const ns = `${tenant}:a`;
      const k1 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob', observedAt: 2000 });
      const k2 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol', observedAt: 1000 });
      // Back-dated, appended last: the latest time is the max, not the last written.
      const k0 = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'dave', observedAt: 500 });
      const noise = [
        makeEvent(ns, { subject: 'alice', predicate: 'name', value: 'Alice', observedAt: 9000 }),
        makeEvent(ns, { subject: 'bob', predicate: 'knows', value: 'alice', observedAt: 9000 }),
        makeEvent(`${tenant}:b`, { subject: 'alice', predicate: 'knows', value: 'eve', observedAt: 9000 }),
      ];
      await store.appendEvents([k1, k2, ...noise], heldAll([k1, k2, ...noise]));
      await store.appendEvents([k0], [changeOf(ns, 'alice', 'knows', [k1, k2, k0])]);
      assert.deepEqual(await store.factHead(ns, 'alice', 'knows'), {
        beliefs: [
          { event: k0, replaced: [] },
          { event: k2, replaced: [] },
          { event: k1, replaced: [] },
        ],
        lastObservedAt: 2000,
        lastRetractionAt: null,
      });
    });

    it('counts retractions and events that are not beliefs in the latest time', async () => {
      const ns = freshNamespace();
      const red = makeEvent(ns, { value: 'red', observedAt: 1000 });
      await store.appendEvents([red], heldAll([red]));
      const unheld = makeEvent(ns, { value: 'green', observedAt: 2000 });
      await store.appendEvents([unheld]);
      assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), {
        beliefs: [{ event: red, replaced: [] }],
        lastObservedAt: 2000,
        lastRetractionAt: null,
      });
      const retract = makeEvent(ns, { value: null, valueKey: null, retraction: true, observedAt: 3000 });
      await store.appendEvents([retract], [changeOf(ns, 'alice', 'favorite_color', [])]);
      assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: 3000,
        lastRetractionAt: 3000,
      });
      const onlyRetracted = makeEvent(ns, {
        subject: 'bob',
        value: 'red',
        valueKey: 'red',
        retraction: true,
        observedAt: 4000,
      });
      await store.appendEvents([onlyRetracted]);
      assert.deepEqual(await store.factHead(ns, 'bob', 'favorite_color'), {
        beliefs: [],
        lastObservedAt: 4000,
        lastRetractionAt: 4000,
      });
    });
  });

  describe('Store.factHead lastRetractionAt', () => {
    it('gives the latest retraction withdrawing the value: of all values or of that one, not of others', async () => {
      const ns = freshNamespace();
      const fact = { subject: 'alice', predicate: 'knows' };
      const bob = makeEvent(ns, { ...fact, value: 'bob', observedAt: 1000 });
      const dropBob = makeEvent(ns, { ...fact, value: 'bob', retraction: true, observedAt: 2000 });
      const dropAll = makeEvent(ns, { ...fact, value: null, valueKey: null, retraction: true, observedAt: 1500 });
      const dropCarol = makeEvent(ns, { ...fact, value: 'carol', retraction: true, observedAt: 5000 });
      const later = makeEvent(ns, { ...fact, value: 'dave', observedAt: 9000 });
      await store.appendEvents([bob, dropBob, dropAll, dropCarol, later], heldAll([later]));
      const at = async (valueKey?: string) => (await store.factHead(ns, 'alice', 'knows', valueKey)).lastRetractionAt;
      assert.equal(await at('bob'), 2000);
      assert.equal(await at('carol'), 5000);
      assert.equal(await at('dave'), 1500, 'the retraction of all values withdraws dave too');
      assert.equal(await at(), 5000, 'all beliefs: the latest retraction of any value');
      assert.equal(
        await at('bob'),
        (await store.factHeads([{ namespace: ns, ...fact, valueKey: 'bob' }]))[0]?.lastRetractionAt,
      );
      const other = await store.factHead(ns, 'alice', 'name', 'bob');
      assert.equal(other.lastRetractionAt, null, 'another predicate’s retractions do not count');
    });
  });

  describe('Store.factHeads', () => {
    it('gives each fact what factHead gives, in request order, from one call', async () => {
      const tenant = freshTenant();
      const ns = `${tenant}:a`;
      const red = makeEvent(ns, { value: 'red', observedAt: 1000 });
      const blue = makeEvent(ns, { value: 'blue', observedAt: 2000 });
      const bob = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'bob', observedAt: 1500 });
      const carol = makeEvent(ns, { subject: 'alice', predicate: 'knows', value: 'carol', observedAt: 1200 });
      const elsewhere = makeEvent(`${tenant}:b`, { value: 'green', observedAt: 3000 });
      await store.appendEvents([red], heldAll([red]));
      await store.appendEvents([blue], [changeOf(ns, 'alice', 'favorite_color', [blue])]);
      await store.appendEvents([bob, carol, elsewhere], heldAll([bob, carol, elsewhere]));
      const requests = [
        { namespace: ns, subject: 'alice', predicate: 'knows', valueKey: 'carol' },
        { namespace: ns, subject: 'alice', predicate: 'favorite_color' },
        { namespace: ns, subject: 'nobody', predicate: 'knows' },
        { namespace: ns, subject: 'alice', predicate: 'knows' },
        { namespace: ns, subject: 'alice', predicate: 'knows', valueKey: 'dave' },
        { namespace: `${tenant}:b`, subject: 'alice', predicate: 'favorite_color' },
      ];
      const heads = await store.factHeads(requests);
      const one = await Promise.all(
        requests.map((r) => store.factHead(r.namespace, r.subject, r.predicate, r.valueKey)),
      );
      assert.deepEqual(heads, one);
      // And the values themselves, so two equally wrong answers do not pass.
      assert.deepEqual(
        heads.map((h) => [beliefIds(h.beliefs), h.lastObservedAt]),
        [
          [[carol.id], 1500],
          [[blue.id], 2000],
          [[], null],
          [[carol.id, bob.id], 1500],
          [[], 1500],
          [[elsewhere.id], 3000],
        ],
      );
      assert.deepEqual(await store.factHeads([]), []);
    });
  });

  describe('Store.factKeys', () => {
    const sorted = (keys: { namespace: string; subject: string }[]) =>
      [...keys].sort((x, y) => (x.namespace + '\u0000' + x.subject < y.namespace + '\u0000' + y.subject ? -1 : 1));

    it('lists each (namespace, subject) of a tenant with events of the predicate once', async () => {
      const tenant = freshTenant();
      const nsA = `${tenant}:a`;
      const nsB = `${tenant}:b`;
      await store.appendEvents([
        makeEvent(nsA, { subject: 'alice', predicate: 'lives_in', value: 'rome' }),
        makeEvent(nsA, { subject: 'alice', predicate: 'lives_in', value: 'oslo' }),
        makeEvent(nsA, { subject: 'bob', predicate: 'lives_in', value: 'paris' }),
        makeEvent(nsA, { subject: 'carol', predicate: 'name', value: 'Carol' }),
        makeEvent(nsB, { subject: 'alice', predicate: 'lives_in', value: 'rome' }),
        // Only a retraction, and not a belief: still has events of the predicate.
        makeEvent(nsB, { subject: 'dave', predicate: 'lives_in', value: null, valueKey: null, retraction: true }),
        makeEvent(`${tenant}x:a`, { subject: 'erin', predicate: 'lives_in', value: 'rome' }),
        makeEvent(`${freshTenant()}:a`, { subject: 'frank', predicate: 'lives_in', value: 'rome' }),
      ]);
      assert.deepEqual(sorted(await store.factKeys(tenant, 'lives_in')), [
        { namespace: nsA, subject: 'alice' },
        { namespace: nsA, subject: 'bob' },
        { namespace: nsB, subject: 'alice' },
        { namespace: nsB, subject: 'dave' },
      ]);
      assert.deepEqual(await store.factKeys(tenant, 'name'), [{ namespace: nsA, subject: 'carol' }]);
      assert.deepEqual(await store.factKeys(tenant, 'knows'), []);
      assert.deepEqual(await store.factKeys(freshTenant(), 'lives_in'), []);
    });
  });
}
