/**
 * A remember validated on replica B with the old registry (its cache), while replica A stores a new
 * cardinality (multi -> single) and rebuilds the fact, never leaves two current values of a now-single
 * fact: B's batch finds, under its locks, that the tenant's newest stored version is not the one it
 * was validated with, and is validated and planned again. Two engines on two stores of one real
 * PostgreSQL database, each wired to its store's change channel as `server/app.ts` does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/common/clock.ts';
import { MemoryEngine, type WriteContext } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { freshTenant } from '../store/conformance/helpers.ts';

const server: TestPostgres = await startPostgres();
after(() => server.stop());
const url = await server.createDatabase();

/** `store`, with writes held at `gate()` until `open()`: the moment between validation and the locks. */
function gated(store: PostgresStore) {
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  let waiting = 0;
  const proxy = new Proxy(store, {
    get(target, p) {
      if (p === 'writeFacts') {
        return async (...args: Parameters<Store['writeFacts']>) => {
          waiting += 1;
          await gate;
          return target.writeFacts(...args);
        };
      }
      const v = Reflect.get(target, p, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return {
    store: proxy as Store,
    close: () => {
      waiting = 0;
      gate = new Promise((r) => {
        open = r;
      });
    },
    open: () => open(),
    waiting: () => waiting,
  };
}

/** An engine on `store` whose registry cache follows the store's change channel. */
function replica(store: Store) {
  const registries = new RegistryBook(store, systemClock, starterRegistry('personal'));
  const stop = store.subscribe?.((c) => {
    if (c.kind === 'registry') registries.invalidate(c.tenant);
    else if (c.kind === 'resync') registries.flush();
  });
  return { registries, engine: new MemoryEngine({ store, registries, clock: systemClock }), stop };
}

const singleAllergy = starterRegistry('personal').map((d) =>
  d.name === 'allergy' ? { ...d, cardinality: 'single' as const } : d,
);

describe('a cardinality change on one replica racing a remember on another (PostgreSQL)', () => {
  let storeA: PostgresStore;
  let storeB: PostgresStore;
  before(async () => {
    [storeA, storeB] = await Promise.all([
      openPostgresStore({ url, poolSize: 6 }),
      openPostgresStore({ url, poolSize: 6 }),
    ]);
  });
  after(async () => {
    await Promise.all([storeA?.close(), storeB?.close()]);
  });

  /** The current values of one fact, as stored. */
  const current = async (namespace: string, subject: string) =>
    (await storeA.currentBeliefs({ namespace, subject, predicate: 'allergy', limit: 10 })).map((b) => b.event.value);

  it('plans again a remember validated with multi when A switched to single before B took the locks', async () => {
    const tenant = freshTenant();
    const ctx = (agent: string): WriteContext => ({
      namespace: `${tenant}:run`,
      actor: { tenant, agent, session: null, keyId: null },
    });
    const a = replica(storeA);
    const g = gated(storeB);
    const b = replica(g.store);
    try {
      await b.engine.remember(ctx('b'), [{ subject: 'alice', predicate: 'allergy', value: 'nuts' }]);
      await a.registries.current(tenant); // A's cache holds the multi version too
      g.close();
      // Validated on B now (multi, from its cache), then held before the write's transaction.
      const pending = b.engine.remember(ctx('b'), [{ subject: 'alice', predicate: 'allergy', value: 'milk' }]);
      while (g.waiting() === 0) await new Promise((r) => setImmediate(r));
      await a.registries.replace(tenant, singleAllergy); // stored, and alice's beliefs rebuilt as single
      assert.deepEqual(await current(ctx('a').namespace, 'alice'), ['nuts']);
      g.open();
      const [r] = await pending;
      assert.deepEqual(r?.superseded, ['nuts'], 'written under the single rule');
      assert.deepEqual(await current(ctx('a').namespace, 'alice'), ['milk'], 'one current value');
    } finally {
      a.stop?.();
      b.stop?.();
    }
  });

  it('leaves one current value per fact when B keeps remembering while A switches to single', async () => {
    const tenant = freshTenant();
    const namespace = `${tenant}:run`;
    const actor = { tenant, agent: 'run', session: null, keyId: null };
    const a = replica(storeA);
    const b = replica(storeB);
    try {
      const subjects = Array.from({ length: 8 }, (_, i) => `user${i}`);
      await b.engine.remember(
        { namespace, actor },
        subjects.map((subject) => ({ subject, predicate: 'allergy', value: 'nuts' })),
      );
      await a.registries.current(tenant);
      // A stress supplement to the test above (which alone proves the fix, every time): timing decides
      // whether a write of B races the change here, so this one can pass without the fix (1 in 3 did).
      // B's loops validate with whatever its cache holds (multi until A's notification arrives) and
      // write on while A stores the single rule and rebuilds.
      let writing = true;
      const loops = Array.from({ length: 6 }, async (_, w) => {
        for (let n = 0; writing; n++) {
          const subject = subjects[(w + n) % subjects.length] as string;
          await b.engine.remember({ namespace, actor }, [{ subject, predicate: 'allergy', value: `v${w}-${n}` }]);
        }
      });
      await new Promise((r) => setTimeout(r, 200));
      await a.registries.replace(tenant, singleAllergy);
      await new Promise((r) => setTimeout(r, 200));
      writing = false;
      await Promise.all(loops);
      for (const subject of subjects) {
        const values = await current(namespace, subject);
        assert.equal(values.length, 1, `${subject}: ${JSON.stringify(values)}`);
      }
    } finally {
      a.stop?.();
      b.stop?.();
    }
  });
});
