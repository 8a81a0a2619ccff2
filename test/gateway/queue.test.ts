import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdminInstance, admin, isGone, send, serviceYaml, startTestGateway, waitFor } from './helpers/harness.ts';

const HOST = 'one.default.example.com';
const oneSlot = (timeout: string) =>
  serviceYaml('one', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'serving.knative.dev/session-timeout': timeout,
    'autoscaling.knative.dev/metric': 'session',
    'autoscaling.knative.dev/target': '1',
    'autoscaling.knative.dev/max-scale': '1',
  });

describe('target 1 + max-scale 1: the wait queue', () => {
  it('makes a second session wait, then serves it on a new instance once the first one is deleted', async (t) => {
    const gw = await startTestGateway(t, oneSlot('1s'), { queueTimeoutMs: 10_000 });
    await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=first' } });
    // A second request: an established session is not reclaimed for the newcomer (it idles out instead).
    const first = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=first' } });
    const firstPid = Number(first.headers['x-pid']);
    const t0 = Date.now();
    const secondP = send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=second' } });
    await waitFor('second request queued', async () => {
      const m = await send(gw.adminUrl, { path: '/metrics' });
      return /tether_gateway_queue_length\{service="one"\} 1/.test(m.body);
    });
    const second = await secondP;
    assert.equal(second.status, 200);
    assert.ok(Date.now() - t0 >= 500, 'served only after the first session idled out');
    assert.notEqual(Number(second.headers['x-pid']), firstPid);
    assert.ok(isGone(firstPid), 'the first instance was deleted');
    const instances = await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys');
    assert.deepEqual(
      instances.map((i) => i.sessions),
      [['second']],
    );
  });

  it('answers 503 with Retry-After when no slot frees within the queue timeout', async (t) => {
    const gw = await startTestGateway(t, oneSlot('30s'), { queueTimeoutMs: 400 });
    await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=first' } });
    const first = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=first' } });
    assert.equal(first.status, 200);
    const second = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=second' } });
    assert.equal(second.status, 503);
    assert.equal(second.headers['retry-after'], '1');
    const body = JSON.parse(second.body);
    assert.equal(body.error.code, 'unavailable');
    assert.match(body.error.message, /no instance of one became free within 400 ms/);
    const again = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=first' } });
    assert.equal(again.headers['x-pid'], first.headers['x-pid'], 'the first session keeps its instance');
  });
});
