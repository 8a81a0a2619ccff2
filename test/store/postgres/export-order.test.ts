/**
 * PostgreSQL exports in commit order: an exporter paging with `since` (the last event id it saw) while
 * writers of two stores on one database commit out of id order sees every event exactly once, as a
 * full export does. Also: a transaction that inserted and has not committed holds back the events
 * committed after it, so its own events cannot land behind the cursor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { newEventId } from '../../../src/common/ids.ts';
import type { ExportQuery, StoredEvent } from '../../../src/store/fact-store.ts';
import { openPostgresStore, type PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import { insertEvents } from '../../../src/store/postgres/queries.ts';
import type { Store } from '../../../src/store/store.ts';
import { waitFor } from '../../gateway/helpers/harness.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { freshTenant, makeEvent } from '../conformance/helpers.ts';

const server: TestPostgres = await startPostgres();
after(() => server.stop());
const url = await server.createDatabase();

/** Pages of `scope` from `since` until a short page; returns the events and the new cursor. */
async function drain(store: Store, scope: Omit<ExportQuery, 'limit' | 'since'>, since?: string) {
  const got: StoredEvent[] = [];
  for (;;) {
    const page = await store.exportEvents({ ...scope, since, limit: 50 });
    got.push(...page);
    if (page.length > 0) since = page[page.length - 1]?.id;
    if (page.length < 50) return { got, since };
  }
}

describe('PostgresStore.exportEvents in commit order', () => {
  let a: PostgresStore;
  let b: PostgresStore;
  before(async () => {
    // Generous waits for a connection and a query (the 2 s and 5 s defaults fail on a loaded machine with
    // 503 unavailable); the store's timeouts are not what this tests.
    const open = () => openPostgresStore({ url, poolSize: 8, connectTimeoutMs: 60_000, queryTimeoutMs: 60_000 });
    [a, b] = await Promise.all([open(), open()]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
  });

  it('holds back events committed after a transaction still in flight, until it ends', async () => {
    const ns = `${freshTenant()}:a`;
    const start = makeEvent(ns, { value: 'start' });
    await a.appendEvents([start]);
    const early = makeEvent(ns, { value: 'inserted first, committed last' });
    const late = makeEvent(ns, { value: 'inserted second, committed first' });
    const open = new pg.Client({ connectionString: url });
    await open.connect();
    try {
      await open.query('BEGIN');
      await insertEvents(open, [early]); // takes its transaction id now
      await b.appendEvents([late]);
      // Without the bound, `late` came now, the cursor moved past it and `early` was lost for good.
      assert.deepEqual(await a.exportEvents({ namespace: ns, since: start.id, limit: 10 }), []);
      await open.query('COMMIT');
    } finally {
      await open.end();
    }
    assert.deepEqual(await a.exportEvents({ namespace: ns, since: start.id, limit: 10 }), [early, late]);
  });

  it('gives an exporter paging with since every event once while two stores write out of id order', async () => {
    const tenant = freshTenant();
    const namespaces = [`${tenant}:a`, `${tenant}:b`, `${tenant}:c`];
    let writing = true;
    let written = 0;
    // 12 writer loops over both stores: each takes its event ids when it plans (as the writer does),
    // then holds its transaction a little, so batches commit out of id order.
    const writers = Array.from({ length: 12 }, async (_, w) => {
      const store = w % 2 ? a : b;
      let n = 0;
      while (writing) {
        const ns = namespaces[n % namespaces.length] as string;
        const subject = `w${w}s${n % 5}`;
        await store.writeFacts({ heads: [{ namespace: ns, subject, predicate: 'note' }] }, async () => {
          const events = [0, 1].map((i) => makeEvent(ns, { id: newEventId(), subject, predicate: 'note', value: i }));
          await sleep(Math.floor(Math.random() * 4));
          return { events, changes: [], result: null };
        });
        n += 1;
        written += 2;
      }
    });
    const seen: StoredEvent[] = [];
    const exporter = (async () => {
      let since: string | undefined;
      while (writing) {
        const r = await drain(a, { tenant }, since);
        seen.push(...r.got);
        since = r.since;
      }
      await Promise.all(writers);
      seen.push(...(await drain(b, { tenant }, since)).got);
    })();
    await sleep(2500);
    // A loaded machine writes fewer in that window: go on until there are enough to race (asserted below).
    await waitFor('more than 200 events written', () => written > 200);
    writing = false;
    await exporter;

    const full = (await drain(a, { tenant })).got;
    assert.ok(full.length > 200, `enough writes to race: ${full.length}`);
    const ids = seen.map((e) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'no event twice');
    assert.deepEqual(new Set(ids), new Set(full.map((e) => e.id)), 'every event of the full export');
    assert.deepEqual(
      ids,
      full.map((e) => e.id),
      'in the order of the full export',
    );
    // Per namespace too (its own index), from the first event on.
    const first = full.find((e) => e.namespace === namespaces[1]) as StoredEvent;
    const one = await drain(b, { namespace: namespaces[1] }, first.id);
    assert.deepEqual(
      [first, ...one.got].map((e) => e.id),
      full.filter((e) => e.namespace === namespaces[1]).map((e) => e.id),
    );
  });
});
