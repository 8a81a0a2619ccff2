/**
 * What the writer costs per statement, counted (`WriterStats.folds`, not timed): new values of a multi
 * fact, back-dated or not, are placed from the fact's current values and each value's last retraction,
 * never by folding its log; a single fact's batch folds its log at most once. And the beliefs stay what
 * folding the whole log gives. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { MemoryEngine, type Statement, type WriteContext } from '../../src/memory/engine.ts';
import { foldFact } from '../../src/memory/fold.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { startPostgres } from '../helpers/postgres.ts';

const T0 = Date.UTC(2026, 0, 1);
const pg = await startPostgres();
after(() => pg.stop());
const pgUrl = await pg.createDatabase();

const stores: [string, () => Promise<Store>][] = [
  ['sqlite', async () => openSqliteStore({ dataDir: ':memory:' })],
  ['postgres', () => openPostgresStore({ url: pgUrl, poolSize: 2 })],
];

for (const [name, open] of stores) {
  describe(`MemoryWriter folds (${name})`, () => {
    async function setup(t: { after: (fn: () => Promise<void> | void) => void }) {
      const store = await open();
      t.after(() => store.close());
      const clock = new ManualClock(T0);
      const registries = new RegistryBook(store, clock, starterRegistry('personal'));
      const engine = new MemoryEngine({ store, registries, clock });
      const agent = `w${Math.random().toString(16).slice(2, 10)}`;
      const ctx: WriteContext = {
        namespace: `acme:${agent}`,
        actor: { tenant: 'acme', agent, session: null, keyId: null },
      };
      const remember = (statements: Statement[]) => engine.remember(ctx, statements);
      /** The stored beliefs of a fact next to what folding its whole log gives. */
      const beliefsAndFold = async (subject: string, predicate: string, cardinality: 'single' | 'multi') => {
        const head = await store.factHead(ctx.namespace, subject, predicate);
        const log = await store.groupEvents(ctx.namespace, [{ subject, predicate }]);
        const ids = (bs: { event: { id: string } }[]) => bs.map((b) => b.event.id).sort();
        return { stored: ids(head.beliefs), folded: ids(foldFact(log, cardinality)), values: head.beliefs };
      };
      return { store, clock, engine, ctx, remember, beliefsAndFold };
    }

    const notes = (prefix: string, n: number, observedAt?: number): Statement[] =>
      Array.from({ length: n }, (_, i) => ({
        subject: 'project',
        predicate: 'note',
        value: `${prefix} ${i}`,
        observedAt,
      }));

    it('writes batches of new values into a big multi fact without folding it', async (t) => {
      const { engine, remember, beliefsAndFold } = await setup(t);
      // Every statement of a batch has the same observed_at: from the second on, none is the newest.
      for (let b = 0; b < 4; b++) await remember(notes(`batch ${b}`, 100));
      await remember(notes('old', 20, T0 - 86_400_000));
      assert.equal(engine.writeStats.folds, 0);
      const { stored, folded } = await beliefsAndFold('project', 'note', 'multi');
      assert.equal(stored.length, 420);
      assert.deepEqual(stored, folded);
    });

    it('places a back-dated value of a multi fact by its last retraction, as a fold does', async (t) => {
      const { engine, clock, ctx, remember, beliefsAndFold } = await setup(t);
      await remember(notes('n', 5));
      clock.advance(1000);
      const forget = { subject: 'project', predicate: 'note', value: 'n 1' };
      assert.equal((await engine.forget(ctx, forget)).withdrawn, 1);
      const retractedAt = clock.now();
      // n 1 is withdrawn at T0+1000: a statement of it at that time sorts before the retraction, so
      // it is stored, not believed. A value never withdrawn is believed from any time, however old.
      const out = await remember([
        { ...forget, observedAt: retractedAt },
        { subject: 'project', predicate: 'note', value: 'new one', observedAt: T0 - 5000 },
      ]);
      assert.deepEqual(
        out.map((o) => [o.stored, o.alreadyKnown]),
        [
          [true, false],
          [true, false],
        ],
      );
      const { stored, folded, values } = await beliefsAndFold('project', 'note', 'multi');
      assert.deepEqual(stored, folded);
      assert.ok(values.some((b) => b.event.value === 'new one'));
      assert.ok(values.every((b) => b.event.value !== 'n 1'));
      assert.equal(engine.writeStats.folds, 0);
    });

    it('does not bring back a value withdrawn in the same batch at the same time', async (t) => {
      const { engine, remember, ctx, beliefsAndFold } = await setup(t);
      await remember(notes('n', 3));
      const gone = engine.forget(ctx, { subject: 'project', predicate: 'note' });
      const again = remember([{ subject: 'project', predicate: 'note', value: 'n 0' }]);
      const later = remember([{ subject: 'project', predicate: 'note', value: 'n 9', observedAt: T0 + 1 }]);
      await Promise.all([gone, again, later]);
      assert.equal(engine.writeStats.batches, 2, 'the forget and both remembers in one batch');
      const { stored, folded, values } = await beliefsAndFold('project', 'note', 'multi');
      assert.deepEqual(stored, folded);
      // The blanket forget is at T0 (the clock did not move): n 0 at T0 sorts before it, n 9 after.
      assert.deepEqual(
        values.map((b) => b.event.value),
        ['n 9'],
      );
      assert.equal(engine.writeStats.folds, 0);
    });

    it('folds a single fact at most once for a batch of statements at the same time', async (t) => {
      const { engine, remember, beliefsAndFold } = await setup(t);
      await remember([{ subject: 'alice', predicate: 'lives_in', value: 'Oslo' }]);
      const cities = ['Rome', 'Paris', 'Lima', 'Rome', 'Kyiv', 'Quito'];
      const out = await remember(cities.map((value) => ({ subject: 'alice', predicate: 'lives_in', value })));
      assert.equal(engine.writeStats.folds, 1);
      assert.deepEqual(
        out.map((o) => o.superseded),
        [['Oslo'], ['Rome'], ['Paris'], ['Lima'], ['Rome'], ['Kyiv']],
      );
      const { stored, folded, values } = await beliefsAndFold('alice', 'lives_in', 'single');
      assert.deepEqual(stored, folded);
      assert.equal(values[0]?.event.value, 'Quito');
      assert.deepEqual(
        values[0]?.replaced.map((r) => r.value),
        ['Kyiv', 'Rome', 'Lima', 'Paris', 'Rome', 'Oslo'],
      );
    });
  });
}
