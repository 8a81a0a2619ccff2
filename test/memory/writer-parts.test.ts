/**
 * A remember of more than `MAX_BATCH_STATEMENTS` statements is validated whole, then written in
 * parts, one store transaction each, with the jobs queued meanwhile written between two parts
 * (counted by wrapping `writeFacts`, not timed): a refused batch stores nothing; a batch in parts
 * stores everything in order with its results in order; another tenant's remember commits between
 * two parts, in a transaction of its own; the request writing in parts is heavy from then on (its
 * light-lane ticket), one that fits in a part stays light; a failure midway leaves a prefix, and sending the batch again stores the rest; a single
 * fact's log is folded at most once per part. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { admit, release } from '../../src/common/light-first.ts';
import { MemoryEngine, type Statement, type WriteContext } from '../../src/memory/engine.ts';
import { foldFact } from '../../src/memory/fold.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { MAX_BATCH_STATEMENTS, MAX_PASSED_OVER } from '../../src/memory/writer.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { refused } from './helpers.ts';

const T0 = Date.UTC(2026, 0, 1);
const pg = await startPostgres();
after(() => pg.stop());
const pgUrl = await pg.createDatabase();

const stores: [string, () => Promise<Store>][] = [
  ['sqlite', async () => openSqliteStore({ dataDir: ':memory:' })],
  ['postgres', () => openPostgresStore({ url: pgUrl, poolSize: 4 })],
];

const contextOf = (tenant: string): WriteContext => {
  const agent = `p${Math.random().toString(16).slice(2, 10)}`;
  return { namespace: `${tenant}:${agent}`, actor: { tenant, agent, session: null, keyId: null } };
};

const notes = (prefix: string, n: number): Statement[] =>
  Array.from({ length: n }, (_, i) => ({ subject: 'project', predicate: 'note', value: `${prefix} ${i}` }));

for (const [name, open] of stores) {
  describe(`MemoryWriter writes a big remember in parts (${name})`, () => {
    async function setup(t: { after: (fn: () => Promise<void> | void) => void }) {
      const store = await open();
      t.after(() => store.close());
      const clock = new ManualClock(T0);
      const engine = new MemoryEngine({
        store,
        registries: new RegistryBook(store, clock, starterRegistry('personal')),
        clock,
      });
      /** Namespaces of the events of each committed `writeFacts` call, in commit order. */
      const commits: string[][] = [];
      let firstCommit!: () => void;
      const committed = new Promise<void>((resolve) => {
        firstCommit = resolve;
      });
      const failAt = { call: 0 };
      /** Called after each commit (a test queues more writes from it). */
      const hooks = { onCommit: () => {} };
      const { writeFacts } = store;
      let calls = 0;
      store.writeFacts = async function counted(scope, plan) {
        if (++calls === failAt.call) throw new Error('disk on fire');
        const out = (await writeFacts.call(store, scope, async (heads, tx) => {
          const w = await plan(heads, tx);
          const namespaces = [...new Set(w.events.map((e) => e.namespace))];
          return { ...w, result: [w.result, namespaces] };
        })) as [unknown, string[]];
        commits.push(out[1]);
        firstCommit();
        hooks.onCommit();
        return out[0];
      } as typeof store.writeFacts;
      const values = async (ctx: WriteContext) =>
        (await store.groupEvents(ctx.namespace, [{ subject: 'project', predicate: 'note' }])).map((e) => e.value);
      return { store, engine, commits, committed, failAt, values, hooks };
    }

    it('makes the request whose batch goes in parts heavy (its ticket), and leaves a one-part batch light', async (t) => {
      const { engine, values } = await setup(t);
      const big = { ...contextOf('acme'), lane: admit() };
      const small = { ...contextOf('acme'), lane: admit() };
      t.after(() => {
        release(big.lane);
        release(small.lane);
      });
      await engine.remember(small, notes('s', MAX_BATCH_STATEMENTS), 'statements');
      assert.equal(small.lane.light, true, 'one part: still light');
      await engine.remember(big, notes('b', MAX_BATCH_STATEMENTS + 1), 'statements');
      assert.equal(big.lane.light, false, 'in parts: heavy, so its later parts do not wait for it');
      assert.equal(small.lane.light, true, 'only the writing request is demoted');
      assert.equal((await values(big)).length, MAX_BATCH_STATEMENTS + 1);
    });

    it('stores nothing of a batch refused by validation', async (t) => {
      const { engine, commits, values } = await setup(t);
      const ctx = contextOf('acme');
      const statements = notes('n', 3 * MAX_BATCH_STATEMENTS);
      const bad = 2 * MAX_BATCH_STATEMENTS + 22; // in the last part
      statements[bad] = { subject: 'project', predicate: 'no_such_predicate', value: 'x' };
      await refused(engine.remember(ctx, statements, 'statements'), `statements[${bad}].predicate`);
      assert.deepEqual(await values(ctx), []);
      assert.equal(commits.length, 0);
    });

    it('stores every statement of a batch in parts, in order, with its results in order', async (t) => {
      const { engine, commits, values, store } = await setup(t);
      const ctx = contextOf('acme');
      const statements = notes('n', 2 * MAX_BATCH_STATEMENTS + 10);
      const known = MAX_BATCH_STATEMENTS + MAX_BATCH_STATEMENTS / 2 + 4; // in the second part
      statements[known] = { subject: 'project', predicate: 'note', value: 'n 3' }; // held by then: already known
      const results = await engine.remember(ctx, statements, 'statements');
      assert.equal(commits.length, 3, 'one transaction per part');
      assert.deepEqual(
        results.map((r) => r.event?.value ?? null),
        statements.map((s, i) => (i === known ? null : s.value)),
      );
      assert.equal(results[known]?.alreadyKnown, true);
      const expected = statements.filter((_, i) => i !== known).map((s) => s.value);
      assert.deepEqual(await values(ctx), expected, 'stored in the order sent');
      const head = await store.factHead(ctx.namespace, 'project', 'note');
      assert.equal(head.beliefs.length, expected.length);
    });

    it("commits another tenant's remember between two parts of a big batch", async (t) => {
      const { engine, commits, committed } = await setup(t);
      const a = contextOf('acme');
      const b = contextOf('globex');
      const big = engine.remember(a, notes('a', 5 * MAX_BATCH_STATEMENTS), 'statements');
      await committed; // B's remember is queued once A's first part is written
      const small = engine.remember(b, [{ subject: 'project', predicate: 'note', value: 'b' }]);
      const [bigResults, smallResults] = await Promise.all([big, small]);
      assert.equal(bigResults.length, 5 * MAX_BATCH_STATEMENTS);
      assert.equal(smallResults[0]?.stored, true);
      const withA = commits.flatMap((ns, i) => (ns.includes(a.namespace) ? [i] : []));
      const withB = commits.findIndex((ns) => ns.includes(b.namespace));
      t.diagnostic(JSON.stringify(commits.map((ns) => ns.map((n) => (n === a.namespace ? 'A' : 'B')))));
      assert.ok(withA.length >= 5, `A in ${withA.length} parts`);
      assert.ok(withB > (withA[0] as number), `B (commit ${withB}) after A's first part (${withA[0]})`);
      assert.ok(withB < (withA.at(-1) as number), `B (commit ${withB}) before A's last part (${withA.at(-1)})`);
      // A write queued while A's parts go on is not filled up with the next one: it waits for one part at most.
      assert.deepEqual(commits[withB], [b.namespace], "B's remember in a transaction of its own");
    });

    it('ends a big remember under a steady stream of small ones, passing it over a bounded number of times', async (t) => {
      const { store, engine, commits, hooks } = await setup(t);
      const a = contextOf('acme');
      const b = contextOf('globex');
      const small: Promise<unknown>[] = [];
      // Every commit queues one more small write, so a new job always waits when the next batch is taken.
      hooks.onCommit = () => {
        if (small.length < 60) {
          small.push(engine.remember(b, [{ subject: 'project', predicate: 'note', value: `b ${small.length}` }]));
        }
      };
      const big = await engine.remember(a, notes('a', 5 * MAX_BATCH_STATEMENTS), 'statements');
      const queuedWhenDone = small.length;
      hooks.onCommit = () => {};
      await Promise.all(small);
      assert.equal(big.length, 5 * MAX_BATCH_STATEMENTS);
      assert.ok(queuedWhenDone < 60, `A ended while the stream went on (${queuedWhenDone} small writes queued)`);
      const withA = commits.flatMap((ns, i) => (ns.includes(a.namespace) ? [i] : []));
      const gaps = withA.slice(1).map((at, i) => at - (withA[i] as number) - 1);
      t.diagnostic(`small commits between A's parts: ${gaps.join(',')}`);
      // One batch at a time (SQLite): the passed-over batches are all that commit between two parts. Where
      // batches are written at once (PostgreSQL), small ones also turn over beside a part in flight, as many
      // as time allows: there the test holds A to ending while the stream goes on (above).
      if ((store.writeConcurrency ?? 1) === 1) {
        assert.ok(
          gaps.every((g) => g <= MAX_PASSED_OVER),
          `at most ${MAX_PASSED_OVER} batches between parts: ${gaps}`,
        );
      }
    });

    it('leaves a prefix when a part fails; the batch sent again stores the rest as already known', async (t) => {
      const { engine, failAt, values } = await setup(t);
      const ctx = contextOf('acme');
      const statements = notes('n', 3 * MAX_BATCH_STATEMENTS);
      failAt.call = 3;
      await assert.rejects(engine.remember(ctx, statements, 'statements'), /disk on fire/);
      const prefix = statements.slice(0, 2 * MAX_BATCH_STATEMENTS).map((s) => s.value);
      assert.deepEqual(await values(ctx), prefix);
      const again = await engine.remember(ctx, statements, 'statements');
      assert.deepEqual(
        again.map((r) => r.alreadyKnown),
        statements.map((_, i) => i < 2 * MAX_BATCH_STATEMENTS),
      );
      assert.deepEqual(
        await values(ctx),
        statements.map((s) => s.value),
      );
    });

    it("folds a single fact's log at most once per part, and its beliefs are the full fold's", async (t) => {
      const { engine, store, commits } = await setup(t);
      const ctx = contextOf('acme');
      await engine.remember(ctx, [{ subject: 'alice', predicate: 'lives_in', value: 'Oslo', observedAt: T0 }]);
      // Each back-dated, each before the stored value: every part needs the fact's log.
      const cities = Array.from({ length: 2 * MAX_BATCH_STATEMENTS + 3 }, (_, i) => ({
        subject: 'alice',
        predicate: 'lives_in',
        value: `city ${i}`,
        observedAt: T0 - 1000 * (i + 1),
      }));
      const before = engine.writeStats.folds;
      const parts = commits.length;
      await engine.remember(ctx, cities, 'statements');
      assert.equal(commits.length - parts, 3);
      assert.equal(engine.writeStats.folds - before, 3, 'one fold per part');
      const head = await store.factHead(ctx.namespace, 'alice', 'lives_in');
      const log = await store.groupEvents(ctx.namespace, [{ subject: 'alice', predicate: 'lives_in' }]);
      const ids = (bs: { event: { id: string } }[]) => bs.map((b) => b.event.id).sort();
      assert.deepEqual(ids(head.beliefs), ids(foldFact(log, 'single')));
      assert.equal(head.beliefs[0]?.event.value, 'Oslo');
    });
  });
}
