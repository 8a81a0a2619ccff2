/**
 * Conformance: `searchEvents` — every term must match (case and diacritics folded), hits newest first,
 * never across namespaces, and query-operator words taken as plain words.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { words } from '../../../src/common/words.ts';
import type { StoredEvent } from '../../../src/store/fact-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { freshNamespace, freshTenant, hitIds, ids, makeEvent } from './helpers.ts';

/**
 * Declares the conformance tests of full-text search over events.
 * @param open gives the store under test; called once before these tests, which never close it
 */
export function searchConformance(open: () => Promise<Store>): void {
  let store: Store;
  before(async () => {
    store = await open();
  });

  describe('Store.searchEvents', () => {
    it('matches words in subject, predicate, value and evidence', async () => {
      const ns = freshNamespace();
      const w = randomBytes(4).toString('hex');
      const inSubject = makeEvent(ns, { subject: `subj${w} person`, value: 'x' });
      const inPredicate = makeEvent(ns, { predicate: `pred${w}`, value: 'y' });
      const inValue = makeEvent(ns, { value: `Value${w} Words` });
      const inEvidence = makeEvent(ns, { value: 'z', evidence: `she said evid${w} twice` });
      await store.appendEvents([inSubject, inPredicate, inValue, inEvidence]);
      for (const [term, e] of [
        [`subj${w}`, inSubject],
        [`pred${w}`, inPredicate],
        [`value${w}`, inValue],
        [`evid${w}`, inEvidence],
      ] as const) {
        const hits = await store.searchEvents(ns, [term], 10);
        assert.deepEqual(hits, [{ eventId: e.id, subject: e.subject, predicate: e.predicate }], term);
      }
    });

    it('requires every term to match', async () => {
      const ns = freshNamespace();
      const tea = makeEvent(ns, { subject: 'alice', predicate: 'prefers', value: 'green tea' });
      const coffee = makeEvent(ns, { subject: 'alice', predicate: 'prefers', value: 'black coffee' });
      await store.appendEvents([tea, coffee]);
      assert.deepEqual(hitIds(await store.searchEvents(ns, ['alice', 'tea'], 10)), [tea.id]);
      const both = await store.searchEvents(ns, ['alice', 'prefers'], 10);
      assert.deepEqual(both.map((h) => h.eventId).sort(), [tea.id, coffee.id].sort());
      assert.deepEqual(await store.searchEvents(ns, ['alice', 'tea', 'coffee'], 10), []);
      assert.deepEqual(await store.searchEvents(ns, ['nothingmatchesthis'], 10), []);
    });

    it('matches case-insensitively', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns, { value: 'Earl GREY Tea' });
      await store.appendEvents([e]);
      assert.deepEqual(
        (await store.searchEvents(ns, ['earl', 'grey'], 10)).map((h) => h.eventId),
        [e.id],
      );
    });

    it('never crosses namespaces, even with the same words', async () => {
      const tenant = freshTenant();
      const nsA = `${tenant}:a`;
      const nsB = `${tenant}:b`;
      const nsAb = `${tenant}:ab`;
      const other = `${freshTenant()}:a`;
      const w = `shared${randomBytes(4).toString('hex')}`;
      const inA = makeEvent(nsA, { value: `${w} words` });
      await store.appendEvents([
        inA,
        makeEvent(nsB, { value: `${w} words` }),
        makeEvent(nsAb, { value: `${w} words` }),
        makeEvent(other, { value: `${w} words` }),
      ]);
      const hits = await store.searchEvents(nsA, [w, 'words'], 10);
      assert.deepEqual(
        hits.map((h) => h.eventId),
        [inA.id],
      );
      assert.deepEqual(await store.searchEvents(`${tenant}:none`, [w], 10), []);
    });

    it('returns hits newest first (not by relevance), at most limit', async () => {
      const ns = freshNamespace();
      const w = `recent${randomBytes(4).toString('hex')}`;
      // The oldest event is all about the word (a ranking would put it first); the rest follow
      // in time, in separate appends, with increasing ids and observed_at.
      const strong = makeEvent(ns, {
        subject: w,
        predicate: 'note',
        value: `${w} ${w} ${w}`,
        evidence: w,
        observedAt: 1000,
      });
      await store.appendEvents([strong]);
      const later: StoredEvent[] = [];
      for (let i = 0; i < 5; i++) {
        const e = makeEvent(ns, {
          subject: `filler ${i}`,
          predicate: 'note',
          value: `a long note about many unrelated things where ${w} is mentioned once among plenty of words ${i}`,
          observedAt: 2000 + i,
        });
        later.push(e);
        await store.appendEvents([e]);
      }
      const batch = [
        makeEvent(ns, { subject: 'batch', predicate: 'note', value: `${w} first of a batch`, observedAt: 3000 }),
        makeEvent(ns, { subject: 'batch', predicate: 'note', value: `${w} second of a batch`, observedAt: 3001 }),
      ];
      await store.appendEvents(batch);
      const newestFirst = ids([strong, ...later, ...batch]).reverse();
      assert.deepEqual(hitIds(await store.searchEvents(ns, [w], 50)), newestFirst);
      assert.deepEqual(hitIds(await store.searchEvents(ns, [w], 3)), newestFirst.slice(0, 3));
      assert.deepEqual(hitIds(await store.searchEvents(ns, [w], 1)), newestFirst.slice(0, 1));
    });

    it('finds text through words(): case and diacritics folded', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns, { subject: 'Zoë', predicate: 'likes', value: 'Crème Brûlée', evidence: 'À LA CARTE' });
      await store.appendEvents([e]);
      for (const text of ['creme brulee', 'Crème', 'BRÛLÉE', 'zoe', 'a la carte', 'zoë likes crème']) {
        assert.deepEqual(hitIds(await store.searchEvents(ns, words(text), 10)), [e.id], text);
      }
      assert.deepEqual(await store.searchEvents(ns, words('crème caramel'), 10), []);
    });

    it('takes words that are query operators elsewhere as plain words', async () => {
      const ns = freshNamespace();
      const e = makeEvent(ns, { subject: 'kitchen', predicate: 'note', value: 'salt and pepper, oil or vinegar' });
      await store.appendEvents([e]);
      assert.deepEqual(
        (await store.searchEvents(ns, ['salt', 'and', 'pepper'], 10)).map((h) => h.eventId),
        [e.id],
      );
      assert.deepEqual(
        (await store.searchEvents(ns, ['or', 'vinegar'], 10)).map((h) => h.eventId),
        [e.id],
      );
      const quoted = await store.searchEvents(ns, ['pepper"', 'salt*'], 10);
      assert.ok(Array.isArray(quoted), 'quotes and stars in a term do not break the query');
    });
  });
}
