import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import type { ServiceState } from '../../src/gateway/state.ts';
import { hit, never, settle, setupCore } from './helpers/core-setup.ts';
import { type AdminInstance, admin, send, serviceYaml, startTestGateway } from './helpers/harness.ts';

const HOST = 'open.default.example.com';
// No max-scale: unlimited per service, so only max-instances bounds it.
const OPEN = serviceYaml('open', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'autoscaling.knative.dev/target': '1',
});

describe('max-instances (gateway-wide cap)', () => {
  it('makes cookie-less requests beyond the cap wait, then answers 503 with Retry-After', async (t) => {
    const gw = await startTestGateway(t, OPEN, { maxInstances: 2, queueTimeoutMs: 300 });
    const a = await send(gw.publicUrl, { host: HOST });
    const b = await send(gw.publicUrl, { host: HOST });
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.notEqual(a.headers['x-pid'], b.headers['x-pid']);
    // Both sessions come back (a one-request session would be reclaimed for the newcomer: reclaim.test.ts).
    for (const r of [a, b]) {
      const cookie = String(r.headers['set-cookie']).split(';')[0] as string;
      assert.equal((await send(gw.publicUrl, { host: HOST, headers: { cookie } })).status, 200);
    }
    const c = await send(gw.publicUrl, { host: HOST });
    assert.equal(c.status, 503);
    assert.equal(c.headers['retry-after'], '1');
    assert.match(JSON.parse(c.body).error.message, /max-instances 2/);
    assert.equal((await admin<AdminInstance[]>(gw, '/_tether/instances')).length, 2);
  });

  it('counts warm-pool instances and lets a paused warm instance of another service give way', async () => {
    const { core, svc, runtime } = setupCore(
      { 'autoscaling.knative.dev/target': '1' },
      { maxInstances: 2, more: { pooled: { 'serving.knative.dev/warm-pool': '3' } } },
    );
    const pooled = core.services[1] as ServiceState;
    core.reconcile();
    await settle(core, pooled);
    assert.equal(runtime.count('start'), 2, 'the warm pool stops at the cap');
    const waiting = core.scheduler.acquire(svc, 'a', never);
    await settle(core, pooled);
    await settle(core, svc);
    const a = await waiting;
    core.scheduler.release(a);
    assert.equal(a.instance.service, svc);
    assert.equal(runtime.count('delete'), 1, 'one warm instance gave way');
    await settle(core, pooled);
    assert.ok(core.pool.free() >= 0);
    assert.equal(svc.instances.size + pooled.instances.size, 2);
    const b = await hit(core, svc, 'b'); // the last warm instance gives way too
    assert.equal(b.instance.service, svc);
    assert.equal(runtime.count('delete'), 2);
    await hit(core, svc, 'a');
    await hit(core, svc, 'b'); // established: not reclaimed for the newcomer below
    await assert.rejects(
      core.scheduler.acquire(pooled, 'p', AbortSignal.timeout(50)),
      (err: unknown) => isTetherError(err) && err.status === 503,
      'nothing left to give way: the new session waits',
    );
    await settle(core, pooled);
    assert.equal(svc.instances.size + pooled.instances.size, 2);
    assert.equal(pooled.instances.size, 0, 'no warm refill beyond the cap');
  });
});
