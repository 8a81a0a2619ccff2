/**
 * Heavy answers built off the event loop (issue 21, point 3): a history page, an `as_of` recall or
 * search and a long recall come back from the read workers as finished JSON bytes, and those bytes are
 * exactly what the same call answered as objects serialized on the loop (the route's answer before):
 * every page of a fact's history with its cursor, values of every type, non-ASCII text, retractions,
 * back-dated values, searches, filters. The route sends them with the JSON content type; the workers
 * run at a lower OS priority, as /proc says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AuthContext } from '../../src/auth/auth-context.ts';
import { ManualClock, systemClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { WORKER_NICE } from '../../src/common/thread-priority.ts';
import { MemoryEngine, type WriteContext } from '../../src/memory/engine.ts';
import { LOG_FOLD_MODULE } from '../../src/memory/log-fold.ts';
import { MemoryReader } from '../../src/memory/recall.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { ANSWER_TEXT_MODULE } from '../../src/server/answer-text.ts';
import { createMemoryServer } from '../../src/server/app.ts';
import { memoryCalls } from '../../src/server/calls/memory-calls.ts';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';
import { ACTOR, MINUTE, NAMESPACE, T0 } from '../memory/helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-answer-text-'));
after(() => rmSync(root, { recursive: true, force: true }));

const auth: AuthContext = {
  keyId: ACTOR.keyId as string,
  tenant: ACTOR.tenant,
  agent: ACTOR.agent,
  session: ACTOR.session,
  admin: false,
  namespace: NAMESPACE,
  expiresAt: null,
};

/** The nice value of a thread of this process, from /proc (the 19th field of its stat). */
const niceOf = (tid: number | 'thread-self') => {
  const stat = readFileSync(
    tid === 'thread-self' ? '/proc/thread-self/stat' : `/proc/${process.pid}/task/${tid}/stat`,
    'utf8',
  );
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};
/** This (the event loop's) thread's nice value before any read worker started. */
const loopNice = process.platform === 'linux' ? niceOf('thread-self') : null;

const text = (bytes: Uint8Array | null) => {
  assert.ok(bytes, 'the store built the answer off the loop');
  return Buffer.from(bytes).toString('utf8');
};

describe('answers built as text in the read workers', () => {
  let store: SqliteStore;
  let calls: ReturnType<typeof memoryCalls>;
  before(async () => {
    store = openSqliteStore({
      dataDir: join(root, 'store'),
      foldModule: LOG_FOLD_MODULE,
      answerModule: ANSWER_TEXT_MODULE,
    });
    const clock = new ManualClock(T0);
    const registries = new RegistryBook(store, clock, starterRegistry('personal'));
    const engine = new MemoryEngine({ store, registries, clock });
    const reader = new MemoryReader({ store, registries, clock });
    calls = memoryCalls({ engine, reader, registries });
    const ctx: WriteContext = { namespace: NAMESPACE, actor: ACTOR };
    for (let b = 0; b < 3; b++) {
      await engine.remember(
        ctx,
        Array.from({ length: 500 }, (_, i) => ({
          subject: 'proj',
          predicate: 'note',
          value: `alpha ${b} ${i} ${i % 7 ? 'plain' : 'ünïcödé ✓ "quoted" \\ line\nbreak'}`,
          confidence: (i % 10) / 10,
          evidence: i % 3 ? null : `seen in run ${i}`,
        })),
      );
      clock.advance(MINUTE);
    }
    await engine.remember(ctx, [
      { subject: 'proj', predicate: 'note', value: 'alpha back-dated', observedAt: T0 - MINUTE },
      { subject: 'alice', predicate: 'lives_in', value: 'alpha Zürich' },
      { subject: 'alice', predicate: 'note', value: 'alpha 42' },
    ]);
    await engine.forget(ctx, {
      subject: 'proj',
      predicate: 'note',
      value: 'alpha 1 7 ünïcödé ✓ "quoted" \\ line\nbreak',
    });
    clock.advance(MINUTE);
    await engine.remember(ctx, [{ subject: 'alice', predicate: 'lives_in', value: 'alpha Genève' }]);
  });
  after(() => store.close());

  it('answers every history page, cursor included, as the loop serialized it', async () => {
    const before = store.pooledReads;
    for (const limit of [1000, 333, 1]) {
      let cursor: string | undefined;
      let pages = 0;
      for (; pages < 2000; pages++) {
        const q = { subject: 'proj', predicate: 'note', limit, cursor };
        const built = text(await calls.historyText(auth, q));
        const loop = await calls.history(auth, q);
        assert.equal(built, JSON.stringify(loop));
        if (limit === 1 && pages === 3) break; // the first pages suffice at one event a page
        if (!loop.next) break;
        cursor = loop.next;
      }
      if (limit === 1000) assert.equal(pages, 1, 'two pages of 1,000 for 1,502 events');
    }
    assert.ok(store.pooledReads - before >= 12, 'the pages were read on the workers');
  });

  it('answers as_of recalls and searches, and long recalls, as the loop serialized them', async () => {
    const asOf = T0 + 10 * MINUTE;
    const queries = [
      { q: 'alpha', as_of: asOf, limit: 1000 },
      { q: 'alpha plain', as_of: asOf, limit: 50, min_confidence: 0.5 },
      { subject: 'alice', as_of: T0 + MINUTE, limit: 10 },
      { subject: 'proj', predicate: 'note', as_of: asOf, limit: 1000 },
      { q: 'alpha', limit: 1000 },
      { q: 'ünïcödé', limit: 3 },
      { limit: 1000 },
      { subject: 'alice', limit: 500 },
    ];
    for (const q of queries) {
      assert.equal(
        text(await calls.recallText(auth, q)),
        JSON.stringify(await calls.recall(auth, q)),
        JSON.stringify(q),
      );
    }
    // A short recall stays on the loop (a worker's round trip would cost more than it saves).
    assert.equal(await calls.recallText(auth, { subject: 'alice', limit: 100 }), null);
  });

  it('refuses an as_of read past the cap before reading, as the loop path does', async () => {
    const clock = new ManualClock(T0 + 20 * MINUTE);
    const registries = new RegistryBook(store, clock, starterRegistry('personal'));
    const reader = new MemoryReader({ store, registries, clock, maxScanEvents: 100 });
    const q = { namespace: NAMESPACE, subject: 'proj', predicate: 'note', asOf: T0 + 10 * MINUTE, limit: 10 };
    await assert.rejects(reader.recallText(q), { code: 'invalid_request', field: 'as_of' });
    await assert.rejects(reader.recall(q), { code: 'invalid_request', field: 'as_of' });
  });

  it('runs the read workers at a lower OS priority, per thread', async (t) => {
    if (process.platform !== 'linux') return t.skip('thread priorities are read from Linux /proc');
    // Two reads at once: the pool starts its second worker when the first is busy.
    const page = () => calls.historyText(auth, { subject: 'proj', predicate: 'note', limit: 1 });
    await Promise.all([page(), page()]);
    const threads = store.readThreads;
    assert.ok(threads.length >= 1 && threads.length <= 2, `${threads.length} read workers`);
    // Lowered to 10, never raised (a test run already at nice > 10 keeps its own).
    const expected = Math.max(WORKER_NICE, loopNice as number);
    for (const { tid, nice } of threads) {
      assert.equal(nice, expected);
      assert.equal(niceOf(tid as number), expected, `thread ${tid}`);
    }
    assert.equal(niceOf('thread-self'), loopNice, 'the event loop keeps its priority (set per thread)');
  });
});

/** The same store without its rendered reads: the routes map and serialize on the loop, as before. */
function renderingNothing(store: Store): Store {
  return new Proxy(store, {
    get(target, name) {
      if (name === 'renderedReads') return undefined;
      const v = Reflect.get(target, name, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Store;
}

describe('the routes over HTTP', () => {
  it('answer history, recall and export with the bytes the loop path sends', async (t) => {
    const srv = await startTestMemoryServer();
    t.after(() => srv.close());
    const { store, keys } = srv.running;
    const loop = await createMemoryServer({
      store: renderingNothing(store),
      keys,
      clock: systemClock,
      log: silentLogger(),
      defaultRegistry: starterRegistry('personal'),
    });
    t.after(() => loop.app.close());
    // Two tenants, interleaved, one with a second registry version: export puts each tenant's
    // versions before its first event, inside a page built in a worker.
    const a = await srv.agentKey('exp-a', 'run-1');
    const b = await srv.agentKey('exp-b', 'run-1');
    const put = await srv.call('PUT', '/v1/registry', {
      key: srv.adminKey,
      body: { tenant: 'exp-b', predicates: [{ name: 'note', cardinality: 'multi', value_type: 'string' }] },
    });
    assert.equal(put.status, 200, put.text);
    for (let round = 0; round < 3; round++) {
      for (const key of [a, b]) {
        const statements = Array.from({ length: 400 }, (_, i) => ({
          subject: 'p',
          predicate: 'note',
          value: `gamma ${round} ${i} ${i % 5 ? '' : 'ünï ✓ "q"'}`,
        }));
        assert.equal((await srv.call('POST', '/v1/memories', { key, body: { statements } })).status, 200);
      }
    }
    const paths: [string, string][] = [
      [srv.adminKey, '/v1/events'],
      [a, '/v1/events'],
      [a, '/v1/memories/history?subject=p&predicate=note&limit=1000'],
      [b, `/v1/memories?q=gamma&as_of=${Date.now() + 60_000}&limit=1000`],
      [b, '/v1/memories?q=gamma&limit=1000'],
      [b, '/v1/memories?limit=1000'],
    ];
    for (const [key, path] of paths) {
      const built = await srv.call('GET', path, { key });
      const before = await loop.app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${key}` } });
      assert.equal(built.status, 200, built.text);
      assert.equal(built.headers.get('content-type'), before.headers['content-type'], path);
      assert.equal(built.text, before.body, path);
    }
    assert.ok((await srv.call('GET', '/v1/events', { key: srv.adminKey })).text.includes('"registry_version"'));
  });

  it('send the built answer with the JSON content type', async (t) => {
    const srv = await startTestMemoryServer();
    t.after(() => srv.close());
    const key = await srv.agentKey('answers', 'run-1');
    const statements = Array.from({ length: 300 }, (_, i) => ({ subject: 'p', predicate: 'note', value: `beta ${i}` }));
    assert.equal((await srv.call('POST', '/v1/memories', { key, body: { statements } })).status, 200);
    for (const path of [
      '/v1/memories/history?subject=p&predicate=note&limit=1000',
      `/v1/memories?q=beta&as_of=${Date.now() + 1000}&limit=1000`,
      '/v1/memories?q=beta&limit=1000',
    ]) {
      const r = await srv.call('GET', path, { key });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8', path);
      const body = JSON.parse(r.text) as { events?: unknown[]; beliefs?: unknown[] };
      assert.equal((body.events ?? body.beliefs)?.length, 300, path);
    }
  });
});
