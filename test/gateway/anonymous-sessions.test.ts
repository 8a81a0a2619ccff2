/**
 * Issue 9 item 4 over HTTP, through a real gateway and real instances: cookie-less requests that fill a
 * service's max-scale do not lock it (the next new user is served: a one-request session gives way), and new
 * sessions per client address are limited (429 + Retry-After; behind a trusted proxy, per X-Forwarded-For).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AdminInstance, admin, send, serviceYaml, startTestGateway, waitFor } from './helpers/harness.ts';

const HOST = 'anon.default.example.com';
const yaml = (maxScale: number) =>
  serviceYaml('anon', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'autoscaling.knative.dev/metric': 'session',
    'autoscaling.knative.dev/target': '1',
    'autoscaling.knative.dev/max-scale': String(maxScale),
    'serving.knative.dev/session-timeout': '30m',
  });

describe('anonymous requests and new-session limits (HTTP)', () => {
  it('cookie-less requests filling max-scale do not lock the service out for new users', async (t) => {
    const gw = await startTestGateway(t, yaml(3), { newSessionsPerMinute: 0, queueTimeoutMs: 5000 });
    const anonymous: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await send(gw.publicUrl, { host: HOST });
      assert.equal(r.status, 200, r.body);
      anonymous.push(String(r.headers['x-pid']));
    }
    // An established user (two requests) holds one of the three slots from here on.
    const settled = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=regular' } });
    assert.equal(settled.status, 200, settled.body);
    const regularPid = String(settled.headers['x-pid']);
    assert.equal((await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=regular' } })).status, 200);
    const newcomer = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=newcomer' } });
    assert.equal(newcomer.status, 200, newcomer.body);
    const again = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=regular' } });
    assert.equal(String(again.headers['x-pid']), regularPid, 'the established session kept its instance');
    const list = await waitFor('at most max-scale instances', async () => {
      const l = await admin<AdminInstance[]>(gw, '/_tether/instances');
      return l.filter((i) => i.state !== 'stopping').length <= 3 ? l : undefined;
    });
    assert.ok(list.length <= 3);
  });

  it('past --new-sessions-per-minute a client gets 429 + Retry-After; known sessions and other clients go on', async (t) => {
    const gw = await startTestGateway(t, yaml(10), {
      newSessionsPerMinute: 2,
      trustedProxies: ['127.0.0.1'],
    });
    const from = (xff: string, cookie?: string) =>
      send(gw.publicUrl, {
        host: HOST,
        headers: { 'x-forwarded-for': xff, ...(cookie ? { cookie: `app=${cookie}` } : {}) },
      });
    assert.equal((await from('203.0.113.5', 'a')).status, 200);
    assert.equal((await from('203.0.113.5', 'b')).status, 200);
    const refused = await from('203.0.113.5', 'c');
    assert.equal(refused.status, 429, refused.body);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(JSON.parse(refused.body).error.code, 'rate_limited');
    assert.equal((await from('203.0.113.5')).status, 429, 'a cookie-less request is a new session too');
    assert.equal((await from('203.0.113.5', 'a')).status, 200, 'a known session is never limited');
    assert.equal((await from('198.51.100.7', 'd')).status, 200, 'another client address has its own budget');
  });
});
