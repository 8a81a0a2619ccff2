/**
 * Redis going away and coming back under a running gateway while traffic runs, and a gateway started before its Redis: bound
 * sessions keep being served from the gateway's own view, new ones get 503 + Retry-After, what changed meanwhile
 * is written back when Redis returns (AOF: the restarted Redis lost nothing), and all is consistent.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startRedis } from '../../helpers/redis.ts';
import { type AdminInstance, admin, send, serviceYaml, waitFor } from '../helpers/harness.ts';
import { redisGateway } from './helpers.ts';

const STAY = 'stay.default.example.com';
const BRIEF = 'brief.default.example.com';
const YAML = [
  serviceYaml('stay', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'autoscaling.knative.dev/metric': 'session',
    'autoscaling.knative.dev/target': '1',
  }),
  // Ends (delete policy) 1 s after its last request: a change made while Redis is down.
  serviceYaml('brief', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'serving.knative.dev/session-timeout': '1s',
  }),
].join('---\n');

describe('gateway on Redis: outages', () => {
  it('serves bound sessions while Redis is down, refuses new ones with 503, and writes back what changed', async (t) => {
    const redis = await startRedis(t, { aof: true });
    const { gw, store } = await redisGateway(t, YAML, { url: redis.url, prefix: redis.prefix(), gatewayId: 'gw-1' });
    const pids = new Map<string, string>();
    for (const key of ['k1', 'k2', 'k3']) {
      const r = await send(gw.publicUrl, { host: STAY, headers: { cookie: `app=${key}` } });
      assert.equal(r.status, 200);
      pids.set(key, String(r.headers['x-pid']));
    }
    assert.equal((await send(gw.publicUrl, { host: BRIEF, headers: { cookie: 'app=b1' } })).status, 200);

    // Traffic on the bound sessions runs all along: before, during and after the outage.
    let traffic = true;
    const served: Array<{ key: string; status: number; pid: string }> = [];
    const running = (async () => {
      while (traffic) {
        await Promise.all(
          [...pids.keys()].map(async (key) => {
            const r = await send(gw.publicUrl, { host: STAY, headers: { cookie: `app=${key}` } });
            served.push({ key, status: r.status, pid: String(r.headers['x-pid']) });
          }),
        );
      }
    })();
    await waitFor('traffic before the outage', () => served.length >= 6);
    await redis.stop();
    const atStop = served.length;
    for (let round = 0; round < 3; round++) {
      for (const [key, pid] of pids) {
        const r = await send(gw.publicUrl, { host: STAY, headers: { cookie: `app=${key}` } });
        assert.equal(r.status, 200, r.body);
        assert.equal(String(r.headers['x-pid']), pid);
      }
    }
    const fresh = await send(gw.publicUrl, { host: STAY, headers: { cookie: 'app=new-during-outage' } });
    assert.equal(fresh.status, 503, fresh.body);
    assert.ok(Number(fresh.headers['retry-after']) >= 1);
    assert.equal(JSON.parse(fresh.body).error.code, 'unavailable');
    // The brief session idles out meanwhile: its end is queued, not lost.
    await waitFor('brief session ended locally', async () => {
      const list = await admin<AdminInstance[]>(gw, '/_tether/instances');
      return !list.some((i) => i.service === 'brief');
    });
    assert.ok(store.queuedWrites > 0, 'writes wait for Redis');

    assert.ok(served.length > atStop, 'traffic went on while Redis was down');
    await redis.start();
    await waitFor('queued writes written back', () => store.queuedWrites === 0);
    const atReturn = served.length;
    await waitFor('traffic after Redis returned', () => served.length >= atReturn + 6);
    traffic = false;
    await running;
    for (const r of served) {
      assert.equal(r.status, 200, `session ${r.key} served throughout`);
      assert.equal(r.pid, pids.get(r.key), `session ${r.key} stays on its instance`);
    }
    const stored = await store.list();
    assert.deepEqual(stored.map((r) => r.service).sort(), ['stay', 'stay', 'stay'], 'AOF kept them; brief ended');
    const instances = await admin<AdminInstance[]>(gw, '/_tether/instances');
    assert.deepEqual(
      (await store.listInstances()).map((i) => [i.name, i.pid]).sort(),
      instances.map((i) => [i.name, i.pid]).sort(),
      'instance records match the gateway',
    );
    assert.deepEqual(
      stored.map((r) => String(instances.find((i) => i.name === r.instance)?.pid)).sort(),
      [...pids.values()].sort(),
      'each stored binding names the instance that served it',
    );
    const after = await send(gw.publicUrl, { host: STAY, headers: { cookie: 'app=new-after' } });
    assert.equal(after.status, 200, 'new sessions again once Redis is back');
  });

  it('starts before its Redis: 503 + Retry-After until the store is read, then serves', async (t) => {
    const redis = await startRedis(t, { start: false });
    const { gw } = await redisGateway(t, YAML, {
      url: redis.url,
      prefix: redis.prefix(),
      gatewayId: 'gw-early',
      storeWaitMs: 100,
    });
    const early = await send(gw.publicUrl, { host: STAY, headers: { cookie: 'app=e1' } });
    assert.equal(early.status, 503);
    assert.ok(Number(early.headers['retry-after']) >= 1);
    await redis.start();
    const served = await waitFor(
      'served once Redis is up',
      async () => {
        const r = await send(gw.publicUrl, { host: STAY, headers: { cookie: 'app=e1' } });
        return r.status === 200 ? r : undefined;
      },
      { intervalMs: 100 },
    );
    assert.ok(served.headers['x-pid']);
  });
});
