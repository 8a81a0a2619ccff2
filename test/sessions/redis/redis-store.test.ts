/**
 * Runs the SessionStore conformance suite against the Redis store on a real redis-server (one per file, a
 * fresh key prefix per test), plus what only Redis has: key prefixes kept apart and no raw key stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { silentLogger } from '../../../src/common/log.ts';
import { RedisSessionStore } from '../../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../../src/sessions/redis/redis-url.ts';
import { sessionId } from '../../../src/sessions/session-store.ts';
import { waitFor } from '../../gateway/helpers/harness.ts';
import { startRedis, type TestRedis } from '../../helpers/redis.ts';
import { sessionStoreConformance } from '../conformance.ts';

let redis: TestRedis;
const cleanups: Array<() => Promise<void>> = [];
before(async () => {
  redis = await startRedis({ after: (fn) => cleanups.push(fn) });
});
after(async () => {
  for (const fn of cleanups) await fn();
});

sessionStoreConformance(
  'redis',
  async (clock) =>
    new RedisSessionStore({
      target: parseRedisUrl(redis.url),
      prefix: redis.prefix(),
      log: silentLogger(),
      now: () => clock.now(),
    }),
);

describe('RedisSessionStore', () => {
  it('never reads or changes what another prefix wrote', async (t) => {
    const open = (prefix: string) =>
      new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger() });
    const a = open(redis.prefix());
    const b = open(redis.prefix());
    t.after(() => Promise.all([a.close(), b.close()]));
    await Promise.all([a.ready(), b.ready()]);
    const rec = {
      id: sessionId('shared-key'),
      service: 'svc',
      instance: 'svc-aaaaa',
      claim: 'svc-x',
      state: 'idle' as const,
      createdAt: 1,
      lastActive: 1,
      idleAt: null,
      expiresAt: null,
      gateway: 'gw-a',
    };
    assert.equal((await a.bind(rec, 1)).outcome, 'bound');
    assert.equal((await b.bind({ ...rec, instance: 'svc-bbbbb', gateway: 'gw-b' }, 1)).outcome, 'bound');
    assert.equal((await a.get('svc', rec.id))?.instance, 'svc-aaaaa');
    await b.end('svc', rec.id);
    assert.equal((await a.get('svc', rec.id))?.instance, 'svc-aaaaa');
    assert.deepEqual(
      (await b.list()).map((r) => r.gateway),
      [],
    );
  });

  it('stores a hash of the session key, never the key itself', async (t) => {
    const prefix = redis.prefix();
    const s = new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger() });
    t.after(() => s.close());
    await s.ready();
    const raw = 'raw-session-key-0123456789abcdef';
    await s.bind(
      {
        id: sessionId(raw),
        service: 'svc',
        instance: 'svc-aaaaa',
        claim: 'svc-x',
        state: 'idle',
        createdAt: 1,
        lastActive: 1,
        idleAt: null,
        expiresAt: null,
        gateway: 'gw',
      },
      1,
    );
    const client = new Redis(redis.port, '127.0.0.1');
    t.after(() => client.quit().then(() => {}));
    const keys = await client.keys(`${prefix}*`);
    assert.ok(keys.length > 0);
    for (const k of keys) {
      assert.ok(!k.includes(raw), k);
      const type = await client.type(k);
      const dump = JSON.stringify(
        type === 'hash'
          ? await client.hgetall(k)
          : type === 'set'
            ? await client.smembers(k)
            : type === 'string'
              ? await client.get(k) // the data marker
              : await client.zrange(k, 0, -1),
      );
      assert.ok(!dump.includes(raw), `${k} holds the raw key`);
    }
  });

  it('notices its data gone (FLUSHALL, a restart without persistence) and runs onDataLost, once per loss', async (t) => {
    const own = await startRedis(t);
    const prefix = own.prefix();
    const s = new RedisSessionStore({
      target: parseRedisUrl(own.url),
      prefix,
      log: silentLogger(),
      maxBackoffMs: 100,
      markerCheckMs: 50,
    });
    t.after(() => s.close());
    let losses = 0;
    s.onDataLost(async () => {
      losses++;
    });
    await s.ready();
    const client = new Redis(own.port, '127.0.0.1');
    t.after(() => client.quit().then(() => {}));
    const first = await waitFor('marker set', () => client.get(`${prefix}marker`));
    await waitFor('the store saw it', () => s.dataMarker === first);
    await new Promise((r) => setTimeout(r, 200)); // several checks: an intact marker is no loss
    assert.equal(losses, 0);

    await client.flushall();
    await waitFor('loss after FLUSHALL', () => losses === 1);
    const second = await waitFor('marker set again', () => client.get(`${prefix}marker`));
    assert.notEqual(second, first);

    await own.stop();
    await own.start(); // no persistence: empty
    await waitFor('loss after the restart', () => losses === 2);
    await waitFor('marker set again', async () => (await client.get(`${prefix}marker`)) !== null);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(losses, 2, 'one restore per loss');
  });

  it('after a FLUSHALL every store on the prefix runs onDataLost, not only the first to notice', async (t) => {
    const prefix = redis.prefix();
    const open = () =>
      new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger(), markerCheckMs: 50 });
    const stores = [open(), open(), open()];
    t.after(() => Promise.all(stores.map((s) => s.close())));
    const losses = [0, 0, 0];
    for (const [i, s] of stores.entries()) {
      s.onDataLost(async () => {
        losses[i] = (losses[i] ?? 0) + 1;
      });
    }
    await Promise.all(stores.map((s) => s.ready()));
    const client = new Redis(redis.port, '127.0.0.1');
    t.after(() => client.quit().then(() => {}));
    const marker = await waitFor('marker set', () => client.get(`${prefix}marker`));
    await waitFor('each store saw the marker', () => stores.every((s) => s.dataMarker === marker));
    await client.del(`${prefix}marker`); // what FLUSHALL does to this prefix, without touching other tests' keys
    await waitFor('every store restored', () => losses.every((n) => n === 1));
  });
});
