/**
 * The `Store` conformance suite: one `describe` per capability of `src/store/store.ts`, testing only
 * the interface's documented behaviour, so every driver (SQLite now, PostgreSQL later) runs it unchanged.
 * Each test writes to fresh namespaces/tenants/key ids, so stores may be shared and need no cleanup.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newEventId } from '../../src/common/ids.ts';
import { words } from '../../src/common/words.ts';
import type {
  BeliefChange,
  CurrentBelief,
  KeyRecord,
  RegistryVersion,
  Replaced,
  SearchHit,
  Store,
  StoredEvent,
} from '../../src/store/store.ts';

/** A fresh tenant name, e.g. `t1a2b3c4d`. */
export function freshTenant(): string {
  return `t${randomUUID().slice(0, 8)}`;
}

/** A fresh namespace `t…:agent`. */
export function freshNamespace(agent = 'a'): string {
  return `${freshTenant()}:${agent}`;
}

function tenantOf(namespace: string): string {
  return namespace.slice(0, namespace.indexOf(':'));
}

/** A complete assertion event in `namespace`; `over` replaces any field. */
export function makeEvent(namespace: string, over: Partial<StoredEvent> = {}): StoredEvent {
  const tenant = tenantOf(namespace);
  const value = over.value === undefined ? 'blue' : over.value;
  return {
    id: newEventId(),
    namespace,
    tenant,
    subject: 'alice',
    predicate: 'favorite_color',
    value,
    valueKey: value === null ? null : String(value).toLowerCase(),
    retraction: false,
    kind: null,
    confidence: 1,
    source: null,
    evidence: null,
    observedAt: Date.UTC(2026, 0, 1),
    recordedAt: Date.UTC(2026, 0, 1),
    actor: { tenant, agent: 'a', session: 'pod-1', keyId: '0123456789abcdef' },
    ...over,
  };
}

function makeKey(tenant: string, over: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: randomBytes(8).toString('hex'),
    hash: randomBytes(32).toString('hex'),
    tenant,
    agent: 'run-1',
    session: 'pod-1',
    admin: false,
    note: 'made by the conformance suite',
    createdAt: Date.UTC(2026, 0, 1),
    expiresAt: Date.UTC(2026, 1, 1),
    revokedAt: null,
    ...over,
  };
}

const ids = (events: readonly { id: string }[]): string[] => events.map((e) => e.id);
const hitIds = (hits: readonly SearchHit[]): string[] => hits.map((h) => h.eventId);
const groupOf = (e: StoredEvent): string => `${e.subject}/${e.predicate}`;
const beliefIds = (beliefs: readonly CurrentBelief[]): string[] => beliefs.map((b) => b.event.id);

/** A change making `current` (events of one fact, each with what it replaced) the beliefs of that fact. */
export function changeOf(
  namespace: string,
  subject: string,
  predicate: string,
  current: readonly (StoredEvent | [StoredEvent, Replaced[]])[],
): BeliefChange {
  return {
    namespace,
    subject,
    predicate,
    current: current.map((c) =>
      Array.isArray(c) ? { eventId: c[0].id, replaced: c[1] } : { eventId: c.id, replaced: [] },
    ),
  };
}

/** Changes making every given assertion a current belief (replacing nothing), one change per fact. */
export function heldAll(events: readonly StoredEvent[]): BeliefChange[] {
  const facts = new Map<string, BeliefChange>();
  for (const e of events) {
    const key = JSON.stringify([e.namespace, e.subject, e.predicate]);
    let c = facts.get(key);
    if (!c) {
      c = { namespace: e.namespace, subject: e.subject, predicate: e.predicate, current: [] };
      facts.set(key, c);
    }
    c.current?.push({ eventId: e.id, replaced: [] });
  }
  return [...facts.values()];
}

/**
 * Runs the whole conformance suite against stores made by `open`.
 * @param name driver label shown in test names, e.g. `sqlite (:memory:)`
 * @param open makes a ready store; called once for the shared suite and once for the close tests
 */
export function storeConformance(name: string, open: () => Promise<Store>): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(async () => {
      await store.close();
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
        assert.deepEqual(await store.factHead(ns, 'alice', 'name'), { beliefs: [], lastObservedAt: null });
        assert.deepEqual(await store.factHead(ns, 'nobody', 'favorite_color'), { beliefs: [], lastObservedAt: null });
        assert.deepEqual(await store.factHead(freshNamespace(), 'alice', 'favorite_color'), {
          beliefs: [],
          lastObservedAt: null,
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
        });
        const retract = makeEvent(ns, { value: null, valueKey: null, retraction: true, observedAt: 3000 });
        await store.appendEvents([retract], [changeOf(ns, 'alice', 'favorite_color', [])]);
        assert.deepEqual(await store.factHead(ns, 'alice', 'favorite_color'), { beliefs: [], lastObservedAt: 3000 });
        const onlyRetracted = makeEvent(ns, {
          subject: 'bob',
          value: 'red',
          valueKey: 'red',
          retraction: true,
          observedAt: 4000,
        });
        await store.appendEvents([onlyRetracted]);
        assert.deepEqual(await store.factHead(ns, 'bob', 'favorite_color'), { beliefs: [], lastObservedAt: 4000 });
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

    describe('Store.exportEvents', () => {
      it('returns one namespace in id order, whatever the insertion order', async () => {
        const ns = freshNamespace();
        const a = makeEvent(ns, { id: newEventId(), value: 'a' });
        const b = makeEvent(ns, { id: newEventId(), value: 'b' });
        const c = makeEvent(ns, { id: newEventId(), value: 'c' });
        await store.importEvents([c, a]);
        await store.importEvents([b]);
        await store.appendEvents([makeEvent(`${tenantOf(ns)}:other`, { value: 'x' })]);
        assert.deepEqual(await store.exportEvents({ namespace: ns, limit: 100 }), [a, b, c]);
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
        const a = makeEvent(freshNamespace(), { value: 'a' });
        const b = makeEvent(freshNamespace(), { value: 'b' });
        await store.appendEvents([a, b]);
        const since = ids([a, b]).sort()[0] as string;
        const sinceJustBefore = `${since.slice(0, -1)}${String.fromCharCode(since.charCodeAt(since.length - 1) - 1)}`;
        const got = await store.exportEvents({ since: sinceJustBefore, limit: 100_000 });
        const mine = got.filter((e) => e.id === a.id || e.id === b.id);
        assert.deepEqual(
          mine.sort((x, y) => (x.id < y.id ? -1 : 1)),
          [a, b].sort((x, y) => (x.id < y.id ? -1 : 1)),
        );
        assert.deepEqual(ids(got), ids(got).sort(), 'id order');
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
        const before = await store.countEvents();

        assert.equal(await store.purgeNamespace(gone), 3);

        assert.equal(await store.countEvents(), before - 3);
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
        assert.deepEqual(await store.factHead(gone, 'alice', 'favorite_color'), { beliefs: [], lastObservedAt: null });
        assert.deepEqual(await store.factHead(gone, 'carol', 'favorite_color'), { beliefs: [], lastObservedAt: null });
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
        });
        assert.deepEqual(await store.searchBeliefs({ namespace: ns, terms: ['old'], limit: 10 }), []);
        assert.deepEqual(
          (await store.searchEvents(ns, ['new'], 10)).map((h) => h.eventId),
          [fresh.id],
        );
        assert.deepEqual(await store.searchEvents(ns, ['old'], 10), []);
      });
    });

    describe('Store registry versions', () => {
      const v = (tenant: string, recordedAt: number, names: string[]): RegistryVersion => ({
        id: newEventId(),
        tenant,
        recordedAt,
        predicates: names.map((n) => ({ name: n, cardinality: 'single', valueType: 'string' })),
      });

      it('returns nothing for a tenant without versions', async () => {
        assert.deepEqual(await store.registryVersions(freshTenant()), []);
      });

      it('keeps every field of a version', async () => {
        const tenant = freshTenant();
        const version: RegistryVersion = {
          id: newEventId(),
          tenant,
          recordedAt: 0,
          predicates: [
            { name: 'stage', cardinality: 'single', valueType: 'enum', allowed: ['lead', 'won'], description: 'deal' },
            { name: 'knows', cardinality: 'multi', valueType: 'ref', aliases: ['friend_of'] },
            { name: 'note', cardinality: 'multi', valueType: 'string' },
          ],
        };
        await store.appendRegistryVersion(version);
        assert.deepEqual(await store.registryVersions(tenant), [version]);
      });

      it('returns versions oldest first, whatever the append order, one tenant only', async () => {
        const tenant = freshTenant();
        const other = freshTenant();
        const initial = v(tenant, 0, ['name']);
        const late = v(tenant, 2000, ['name', 'lives_in', 'knows']);
        const middle = v(tenant, 1000, ['name', 'lives_in']);
        await store.appendRegistryVersion(initial);
        await store.appendRegistryVersion(late);
        await store.appendRegistryVersion(v(other, 500, ['other']));
        await store.appendRegistryVersion(middle);
        assert.deepEqual(await store.registryVersions(tenant), [initial, middle, late]);
        assert.equal((await store.registryVersions(other)).length, 1);
      });
    });

    describe('Store keys', () => {
      it('inserts and gets a key with every field', async () => {
        const tenant = freshTenant();
        const agentKey = makeKey(tenant);
        const adminKey = makeKey(tenant, { agent: null, session: null, admin: true, note: null, expiresAt: null });
        await store.insertKey(agentKey);
        await store.insertKey(adminKey);
        assert.deepEqual(await store.getKey(agentKey.id), agentKey);
        assert.deepEqual(await store.getKey(adminKey.id), adminKey);
        assert.equal(await store.getKey(randomBytes(8).toString('hex')), null);
      });

      it('lists keys of one tenant, or of every tenant with *', async () => {
        const tenant = freshTenant();
        const other = freshTenant();
        const a1 = makeKey(tenant);
        const a2 = makeKey(tenant, { admin: true, agent: null, createdAt: Date.UTC(2026, 0, 2) });
        const b1 = makeKey(other);
        for (const k of [a1, b1, a2]) await store.insertKey(k);
        const byId = (ks: KeyRecord[]) => [...ks].sort((x, y) => (x.id < y.id ? -1 : 1));
        assert.deepEqual(byId(await store.listKeys(tenant)), byId([a1, a2]));
        assert.deepEqual(await store.listKeys(other), [b1]);
        assert.deepEqual(await store.listKeys(freshTenant()), []);
        const all = await store.listKeys('*');
        const mine = all.filter((k) => [a1.id, a2.id, b1.id].includes(k.id));
        assert.deepEqual(byId(mine), byId([a1, a2, b1]));
      });

      it('revokes a key once: a repeat keeps the first time, an unknown id gives false', async () => {
        const key = makeKey(freshTenant());
        await store.insertKey(key);
        const t1 = Date.UTC(2026, 0, 10);
        assert.equal(await store.revokeKey(key.id, t1), true);
        assert.deepEqual(await store.getKey(key.id), { ...key, revokedAt: t1 });
        assert.equal(await store.revokeKey(key.id, t1 + 5000), true);
        assert.equal((await store.getKey(key.id))?.revokedAt, t1);
        assert.equal(await store.revokeKey(randomBytes(8).toString('hex'), t1), false);
      });
    });

    describe('Store.countEvents', () => {
      it('counts appended and imported events, not skipped ones', async () => {
        const ns = freshNamespace();
        const start = await store.countEvents();
        const e = makeEvent(ns);
        await store.appendEvents([e, makeEvent(ns, { value: 'red' })]);
        assert.equal(await store.countEvents(), start + 2);
        assert.equal(await store.importEvents([e, makeEvent(ns, { value: 'green' })]), 1);
        assert.equal(await store.countEvents(), start + 3);
      });
    });

    describe('Store.ping + close', () => {
      it('pings while open, closes twice safely, and refuses to ping once closed', async () => {
        const own = await open();
        await own.ping();
        assert.equal(typeof own.kind, 'string');
        assert.ok(own.kind.length > 0);
        await own.close();
        await own.close();
        await assert.rejects(own.ping());
      });

      it('closes concurrently without error', async () => {
        const own = await open();
        await Promise.all([own.close(), own.close()]);
      });
    });
  });
}
