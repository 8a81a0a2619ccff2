/**
 * Two gateways on one Redis (one prefix): concurrent first requests of one new session through both end on one
 * instance, and each gateway proxies a session the other bound to that instance; a stream open through the
 * gateway that does not own the instance counts as activity at its owner.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionId } from '../../../src/sessions/session-store.ts';
import { startRedis } from '../../helpers/redis.ts';
import { type AdminInstance, admin, send, serviceYaml } from '../helpers/harness.ts';
import { redisGateway } from './helpers.ts';

const HOST = 'duo.default.example.com';
const YAML = serviceYaml('duo', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
  'serving.knative.dev/warm-pool': '2',
});

describe('two gateways on one Redis', () => {
  it('concurrent first requests of one new session from both end on one instance', async (t) => {
    const redis = await startRedis(t);
    const prefix = redis.prefix();
    const a = await redisGateway(t, YAML, { url: redis.url, prefix, gatewayId: 'gw-a' });
    const b = await redisGateway(t, YAML, { url: redis.url, prefix, gatewayId: 'gw-b' });
    const keys = Array.from({ length: 8 }, (_, i) => `duo-${i}`);
    const firsts = await Promise.all(
      keys.map((key) =>
        Promise.all([a, b].map((g) => send(g.gw.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } }))),
      ),
    );
    for (const [i, [ra, rb]] of firsts.entries()) {
      assert.equal(ra?.status, 200, ra?.body);
      assert.equal(rb?.status, 200, rb?.body);
      assert.equal(ra?.headers['x-pid'], rb?.headers['x-pid'], `session ${keys[i]}: one instance`);
    }
    // Later requests through either gateway keep reaching that instance.
    for (const [i, key] of keys.entries()) {
      const pid = firsts[i]?.[0]?.headers['x-pid'];
      for (const g of [b, a]) {
        const r = await send(g.gw.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } });
        assert.equal(r.headers['x-pid'], pid);
      }
    }
    // One binding per session in the store, each on an instance of the gateway that bound it.
    const records = await a.store.list('duo');
    assert.deepEqual(records.map((r) => r.id).sort(), keys.map(sessionId).sort());
    const owned = new Map<string, string>();
    for (const [g, id] of [
      [a, 'gw-a'],
      [b, 'gw-b'],
    ] as const) {
      for (const i of await admin<AdminInstance[]>(g.gw, '/_tether/instances')) owned.set(i.name, id);
    }
    for (const r of records) assert.equal(owned.get(r.instance), r.gateway, `${r.instance} belongs to ${r.gateway}`);
    const bound = [...owned.keys()].filter((n) => records.some((r) => r.instance === n));
    assert.equal(bound.length, keys.length, 'target 1: one instance per session, none shared');
  });

  it('a stream open through the other gateway keeps the owner from pausing the instance', {
    timeout: 120_000,
  }, async (t) => {
    const redis = await startRedis(t);
    const prefix = redis.prefix();
    const yaml = serviceYaml('lull', {
      'serving.knative.dev/session-affinity-cookie': 'app',
      'autoscaling.knative.dev/metric': 'session',
      'autoscaling.knative.dev/target': '1',
      'serving.knative.dev/sandbox-idle-policy': 'pause',
      'serving.knative.dev/session-timeout': '4s',
    });
    const host = 'lull.default.example.com';
    const owner = await redisGateway(t, yaml, { url: redis.url, prefix, gatewayId: 'gw-owner' });
    const other = await redisGateway(t, yaml, { url: redis.url, prefix, gatewayId: 'gw-other' });
    const first = await send(owner.gw.publicUrl, { host, headers: { cookie: 'app=long' } });
    assert.equal(first.status, 200, first.body);
    // 12 ticks 500 ms apart: 6 s through the other gateway, longer than the owner's 4 s idle timeout.
    const stream = await send(other.gw.publicUrl, {
      host,
      path: '/events?n=12&gap=500',
      headers: { cookie: 'app=long' },
    });
    assert.equal(stream.status, 200, stream.body);
    assert.equal((stream.body.match(/^data: tick \d+$/gm) ?? []).length, 12, 'every tick arrived');
    const [inst] = await admin<AdminInstance[]>(owner.gw, '/_tether/instances');
    assert.equal(inst?.state, 'running', 'not paused while the stream was open');
    const after = await send(owner.gw.publicUrl, { host, headers: { cookie: 'app=long' } });
    assert.equal(after.headers['x-pid'], first.headers['x-pid'], 'the same instance');
  });
});
