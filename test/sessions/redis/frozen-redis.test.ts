/**
 * The Redis store on a redis-server that is alive but silent (SIGSTOP): every call ends by its deadline with
 * 503 `unavailable`, the later ones at once; writes wait in the queue; after SIGCONT the queued writes land and
 * a bind that got no answer (which Redis makes once it runs again) is undone, so its instance is free.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { isTetherError } from '../../../src/common/errors.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { RedisSessionStore } from '../../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../../src/sessions/redis/redis-url.ts';
import { type SessionRecord, sessionId } from '../../../src/sessions/session-store.ts';
import { waitFor } from '../../gateway/helpers/harness.ts';
import { startRedis } from '../../helpers/redis.ts';

const record = (key: string, instance: string, createdAt: number): SessionRecord => ({
  id: sessionId(key),
  service: 'svc',
  instance,
  claim: `svc-${key}`,
  state: 'idle',
  createdAt,
  lastActive: createdAt,
  idleAt: null,
  expiresAt: null,
  gateway: 'gw',
});

const isUnavailable = (err: unknown) => isTetherError(err) && err.status === 503 && (err.retryAfter ?? 0) >= 1;

describe('RedisSessionStore on a frozen Redis (SIGSTOP)', () => {
  it('fails calls by their deadline with 503, queues writes, and undoes an unanswered bind after SIGCONT', async (t) => {
    const redis = await startRedis(t);
    const prefix = redis.prefix();
    const store = new RedisSessionStore({
      target: parseRedisUrl(redis.url),
      prefix,
      log: silentLogger(),
      commandTimeoutMs: 500,
      maxBackoffMs: 100,
    });
    t.after(() => store.close());
    await store.ready();
    const kept = record('kept', 'svc-kept', 1);
    assert.equal((await store.bind(kept, 1)).outcome, 'bound');

    redis.freeze();
    const t0 = performance.now();
    await assert.rejects(store.bind(record('lost', 'svc-one', 2), 1), isUnavailable);
    const waited = performance.now() - t0;
    assert.ok(waited >= 400 && waited < 5000, `the bind waited its deadline, not the outage (${waited} ms)`);
    // Counted as down now: no call waits again.
    await assert.rejects(store.get('svc', kept.id), isUnavailable);
    await assert.rejects(store.list(), isUnavailable);
    await store.touch('svc', kept.id, { state: 'paused', lastActive: 5 });
    assert.ok(store.queuedWrites >= 2, 'the touch and the undo of the bind wait for Redis');

    redis.thaw();
    await waitFor('queued writes made', () => store.queuedWrites === 0);
    assert.equal((await store.get('svc', kept.id))?.state, 'paused', 'the queued touch landed');
    assert.equal(await store.get('svc', sessionId('lost')), undefined, 'the unanswered bind was undone');
    const raw = new Redis(redis.port, '127.0.0.1');
    t.after(() => raw.quit().then(() => {}));
    assert.equal(await raw.scard(`${prefix}b:svc:svc-one`), 0);
    assert.equal((await store.bind(record('next', 'svc-one', 3), 1)).outcome, 'bound', 'its instance is free');
  });
});
