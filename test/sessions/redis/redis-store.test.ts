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
            : await client.zrange(k, 0, -1),
      );
      assert.ok(!dump.includes(raw), `${k} holds the raw key`);
    }
  });
});
