/**
 * Issue 22 item 2, black-box: a gateway on a redis-server stopped with SIGSTOP (alive, silent). A new session
 * gets 503 + Retry-After within 5 s (not after the outage), a bound session is still served from the gateway's
 * own table, and after SIGCONT new sessions are served again and Redis holds no binding the gateway gave up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionId } from '../../../src/sessions/session-store.ts';
import { startRedis } from '../../helpers/redis.ts';
import { send, serviceYaml, waitFor } from '../helpers/harness.ts';
import { redisGateway } from './helpers.ts';

const HOST = 'stay.default.example.com';
const YAML = serviceYaml('stay', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
});

describe('gateway on a frozen Redis (SIGSTOP)', () => {
  it('answers a new session 503 + Retry-After within 5 s, serves bound ones, and recovers after SIGCONT', async (t) => {
    const redis = await startRedis(t);
    const { gw, store } = await redisGateway(t, YAML, { url: redis.url, prefix: redis.prefix(), gatewayId: 'gw-f' });
    const bound = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=bound' } });
    assert.equal(bound.status, 200, bound.body);
    const pid = String(bound.headers['x-pid']);

    redis.freeze();
    t.after(() => redis.thaw());
    for (const key of ['new-1', 'new-2']) {
      const t0 = performance.now();
      const r = await send(gw.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } });
      const ms = performance.now() - t0;
      assert.equal(r.status, 503, r.body);
      assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After');
      assert.equal(JSON.parse(r.body).error.code, 'unavailable');
      assert.ok(ms < 5000, `${key} answered in ${Math.round(ms)} ms, not after the outage`);
    }
    const cookieless = await send(gw.publicUrl, { host: HOST });
    assert.equal(cookieless.status, 503, 'a cookie-less request is a new session too');
    for (let i = 0; i < 3; i++) {
      const r = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=bound' } });
      assert.equal(r.status, 200, 'the bound session is served while Redis is frozen');
      assert.equal(String(r.headers['x-pid']), pid);
    }

    redis.thaw();
    const again = await waitFor(
      'new sessions served after SIGCONT',
      async () => {
        const r = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=new-1' } });
        return r.status === 200 ? r : undefined;
      },
      { intervalMs: 200 },
    );
    assert.notEqual(String(again.headers['x-pid']), pid);
    await waitFor('queued writes made', () => store.queuedWrites === 0);
    const stored = await store.list('stay');
    assert.deepEqual(
      stored.map((r) => r.id).sort(),
      [sessionId('bound'), sessionId('new-1')].sort(),
      'Redis holds the two bound sessions, none of the refused ones',
    );
  });
});
