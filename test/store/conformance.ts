/**
 * The `Store` conformance suite: one `describe` per capability of `src/store/store.ts`, testing only
 * the interface's documented behaviour, so every driver (SQLite now, PostgreSQL later) runs it unchanged.
 * Each test writes to fresh namespaces/tenants/key ids, so stores may be shared and need no cleanup.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newEventId } from '../../src/common/ids.ts';
import type { KeyRecord, RegistryVersion, SearchHit, Store, StoredEvent } from '../../src/store/store.ts';

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

      it('returns hits best first, at most limit', async () => {
        const ns = freshNamespace();
        const w = `rank${randomBytes(4).toString('hex')}`;
        const weak = makeEvent(ns, {
          subject: 'project',
          predicate: 'note',
          value: `a long note about many unrelated things where ${w} is mentioned only once among plenty of other words`,
        });
        const strong = makeEvent(ns, { subject: w, predicate: 'note', value: `${w} ${w} ${w}`, evidence: w });
        const fillers = Array.from({ length: 5 }, (_, i) =>
          makeEvent(ns, { subject: `filler ${i}`, predicate: 'note', value: `${w} and some more filler text ${i}` }),
        );
        await store.appendEvents([weak, ...fillers, strong]);
        const all = await store.searchEvents(ns, [w], 50);
        assert.equal(all.length, 7);
        assert.equal(all[0]?.eventId, strong.id, 'the event that is all about the word ranks first');
        assert.equal(new Set(all.map((h) => h.eventId)).size, 7);
        const three = await store.searchEvents(ns, [w], 3);
        assert.equal(three.length, 3);
        assert.equal(three[0]?.eventId, strong.id);
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
          makeEvent(gone, { value: null, valueKey: null, retraction: true }),
        ];
        const kept = [makeEvent(sibling, { value: `${w} one` }), makeEvent(foreign, { value: `${w} one` })];
        await store.appendEvents([...doomed, ...kept]);
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
        await store.appendEvents([makeEvent(ns, { value: 'old' })]);
        await store.purgeNamespace(ns);
        const fresh = makeEvent(ns, { value: 'new' });
        await store.appendEvents([fresh]);
        assert.deepEqual(await store.factEvents({ namespace: ns, maxGroups: 10 }), [fresh]);
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
