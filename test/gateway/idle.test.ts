import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AdminInstance,
  admin,
  isGone,
  procState,
  send,
  serviceYaml,
  startTestGateway,
  waitFor,
} from './helpers/harness.ts';

const idle = (name: string, extra: Record<string, string>) =>
  serviceYaml(name, {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'autoscaling.knative.dev/metric': 'session',
    'autoscaling.knative.dev/target': '1',
    ...extra,
  });

describe('idle sessions and expiry', () => {
  it('delete policy: after the idle timeout the process is gone and the service has zero instances', async (t) => {
    const gw = await startTestGateway(t, idle('del', { 'serving.knative.dev/session-timeout': '1s' }));
    const host = 'del.default.example.com';
    const r = await send(gw.publicUrl, { host, headers: { cookie: 'app=11' } });
    const pid = Number(r.headers['x-pid']);
    assert.equal(procState(pid) === null, false);
    await waitFor('instance deleted', () => isGone(pid));
    await waitFor(
      'zero instances',
      async () => (await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys')).length === 0,
    );
    assert.deepEqual(await admin(gw, '/_tether/sessions'), []);
    const back = await send(gw.publicUrl, { host, headers: { cookie: 'app=11' } });
    assert.notEqual(Number(back.headers['x-pid']), pid, 'a returning session gets a new instance');
    assert.equal(back.headers['x-count'], '1');
  });

  it('pause policy: the idle process is stopped (T), and the next request resumes the same pid with its counter', async (t) => {
    const gw = await startTestGateway(
      t,
      idle('pz', { 'serving.knative.dev/sandbox-idle-policy': 'pause', 'serving.knative.dev/session-timeout': '1s' }),
    );
    const host = 'pz.default.example.com';
    const r1 = await send(gw.publicUrl, { host, headers: { cookie: 'app=11' } });
    const r2 = await send(gw.publicUrl, { host, headers: { cookie: 'app=11' } });
    const pid = Number(r1.headers['x-pid']);
    assert.equal(r2.headers['x-count'], '2');
    // `paused` is shown once the gateway observed the stop (`pausing` until then).
    const inst = await waitFor('instance paused', async () =>
      (await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys')).find((i) => i.state === 'paused'),
    );
    assert.equal(procState(pid), 'T');
    assert.deepEqual(inst?.sessions, ['11']);
    const sessions = await admin<Array<{ state: string }>>(gw, '/_tether/sessions');
    assert.equal(sessions[0]?.state, 'paused');
    const r3 = await send(gw.publicUrl, { host, headers: { cookie: 'app=11' } });
    assert.equal(Number(r3.headers['x-pid']), pid);
    assert.equal(r3.headers['x-count'], '3');
    assert.notEqual(procState(pid), 'T');
  });

  it('an open request counts as activity: a slow stream is not cut by the idle timeout', async (t) => {
    const gw = await startTestGateway(
      t,
      idle('busy', {
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '250ms',
      }),
    );
    const host = 'busy.default.example.com';
    const r = await send(gw.publicUrl, { host, path: '/events?n=8&gap=100', headers: { cookie: 'app=s' } });
    assert.equal(r.status, 200);
    assert.equal((r.body.match(/^data: tick \d+$/gm) ?? []).length, 8);
  });

  it('session-expiry ends the session and deletes its instance even while it is active', async (t) => {
    const gw = await startTestGateway(
      t,
      idle('exp', {
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '30m',
        'serving.knative.dev/session-expiry': '1500ms',
      }),
    );
    const host = 'exp.default.example.com';
    const r = await send(gw.publicUrl, { host, headers: { cookie: 'app=e' } });
    const pid = Number(r.headers['x-pid']);
    const sessions = await admin<Array<{ expires_at: string }>>(gw, '/_tether/sessions');
    assert.ok(Date.parse(sessions[0]?.expires_at ?? '') > Date.now());
    // Keep the session busy: activity must not extend an expiry.
    const deadline = Date.now() + 5000;
    let next: Awaited<ReturnType<typeof send>> | undefined;
    while (!next && Date.now() < deadline) {
      const x = await send(gw.publicUrl, { host, headers: { cookie: 'app=e' } });
      if (x.status === 200 && Number(x.headers['x-pid']) !== pid) next = x;
    }
    assert.ok(next, 'after expiry the session is served by a new instance');
    assert.equal(next.headers['x-count'], '1');
    await waitFor('expired instance deleted', () => isGone(pid));
  });
});
