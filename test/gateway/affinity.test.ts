import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionId } from '../../src/sessions/session-store.ts';
import { type AdminInstance, admin, send, serviceYaml, startTestGateway } from './helpers/harness.ts';

const HOST = 'agent.default.example.com';
const YAML = serviceYaml('agent', {
  'serving.knative.dev/session-affinity': 'true',
  'serving.knative.dev/session-affinity-cookie': 'app',
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
});

describe('gateway routing and session affinity', () => {
  it('sends the same cookie to the same instance (same pid) and another cookie to another instance', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const a1 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=11' } });
    const a2 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=11' } });
    const b1 = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=22' } });
    assert.equal(a1.status, 200);
    assert.match(a1.body, /^Hello World!\n\nCookies:\n {2}Name: {2}app\n {2}Value: 11\n\nRaw Cookie Header: app=11\n/);
    assert.equal(a2.headers['x-pid'], a1.headers['x-pid']);
    assert.equal(a2.headers['x-count'], '2');
    assert.notEqual(b1.headers['x-pid'], a1.headers['x-pid']);
    assert.equal(b1.headers['x-count'], '1');
    assert.equal(a1.headers['set-cookie'], undefined);
    const instances = await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys');
    assert.deepEqual(
      instances.map((i) => [i.sessions, i.state, String(i.pid), i.warm]).sort(),
      [
        [['11'], 'running', a1.headers['x-pid'], false],
        [['22'], 'running', b1.headers['x-pid'], false],
      ].sort(),
    );
    for (const i of instances) assert.match(i.name, /^agent-[a-z0-9]{5}$/);
  });

  it('gives a request without a session a new key in an HttpOnly Set-Cookie, which then sticks', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const first = await send(gw.publicUrl, { host: HOST });
    assert.equal(first.status, 200);
    const setCookie = String(first.headers['set-cookie']);
    assert.match(setCookie, /^app=[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{22}; Path=\/; HttpOnly/);
    const cookie = setCookie.split(';')[0] as string;
    const again = await send(gw.publicUrl, { host: HOST, headers: { cookie } });
    assert.equal(again.headers['x-pid'], first.headers['x-pid']);
    assert.equal(again.headers['set-cookie'], undefined);
    const sessions = await admin<Array<Record<string, unknown>>>(gw, '/_tether/sessions?reveal=keys');
    assert.equal(sessions.length, 1);
    assert.deepEqual(Object.keys(sessions[0] ?? {}), [
      'key',
      'key_prefix',
      'id',
      'service',
      'claim',
      'instance',
      'state',
      'created_at',
      'last_active',
      'on_idle',
      'idle_deadline',
      'expires_at',
      'gateway',
    ]);
    assert.equal(sessions[0]?.key, cookie.slice('app='.length));
    assert.equal(sessions[0]?.id, sessionId(cookie.slice('app='.length)).slice(0, 12));
    assert.equal(sessions[0]?.state, 'idle');
    assert.equal(sessions[0]?.expires_at, null);
  });

  it('accepts X-Session-Key, and passes the Cookie header unchanged with X-Forwarded-* added', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const viaHeader = await send(gw.publicUrl, { host: HOST, path: '/env', headers: { 'x-session-key': 'k1' } });
    const again = await send(gw.publicUrl, { host: HOST, path: '/env', headers: { 'x-session-key': 'k1' } });
    const a = JSON.parse(viaHeader.body);
    assert.equal(JSON.parse(again.body).pid, a.pid);
    assert.equal(viaHeader.headers['set-cookie'], undefined);
    const raw = 'other=x;  app=33 ; z="q"';
    const r = await send(gw.publicUrl, {
      host: `${HOST}:8081`,
      path: '/env?x=1',
      headers: { cookie: raw, 'x-forwarded-for': '10.0.0.9', connection: 'keep-alive, x-drop-me', 'x-drop-me': '1' },
    });
    const seen = JSON.parse(r.body);
    assert.equal(seen.headers.cookie, raw);
    assert.equal(seen.headers['x-forwarded-for'], '10.0.0.9, 127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], `${HOST}:8081`);
    assert.equal(seen.headers.host, `${HOST}:8081`);
    assert.equal(seen.headers['x-drop-me'], undefined);
    assert.equal(seen.env.K_SERVICE, 'agent');
    assert.match(seen.env.TETHER_INSTANCE, /^agent-[a-z0-9]{5}$/);
  });

  it('answers 404 naming the known hosts for an unknown host, and never serves the admin API publicly', async (t) => {
    const gw = await startTestGateway(t, `${YAML}---\n${serviceYaml('other', {})}`);
    const r = await send(gw.publicUrl, { host: 'nope.default.example.com' });
    assert.equal(r.status, 404);
    assert.deepEqual(JSON.parse(r.body), {
      error: {
        code: 'not_found',
        message:
          "no service for host 'nope.default.example.com'; known hosts: agent.default.example.com, other.default.example.com",
      },
    });
    const adminOnPublic = await send(gw.publicUrl, { path: '/_tether/instances' });
    assert.equal(adminOnPublic.status, 404);
    const metricsOnPublic = await send(gw.publicUrl, { host: '127.0.0.1', path: '/metrics' });
    assert.equal(metricsOnPublic.status, 404);
    assert.ok(gw.adminUrl.startsWith('http://127.0.0.1:'));
    const health = await send(gw.adminUrl, { path: '/healthz' });
    assert.equal(health.status, 200);
    const services = await admin<Array<{ name: string; host: string }>>(gw, '/_tether/services');
    assert.deepEqual(
      services.map((s) => s.host),
      ['agent.default.example.com', 'other.default.example.com'],
    );
  });

  it('with session-affinity "false" sets no cookie and shares one session among clients', async (t) => {
    const gw = await startTestGateway(t, serviceYaml('plain', { 'serving.knative.dev/session-affinity': 'false' }));
    const host = 'plain.default.example.com';
    const a = await send(gw.publicUrl, { host });
    const b = await send(gw.publicUrl, { host, headers: { cookie: 'tether-session=mine' } });
    assert.equal(a.headers['set-cookie'], undefined);
    assert.equal(b.headers['x-pid'], a.headers['x-pid']);
    assert.equal(b.headers['x-count'], '2');
  });

  it('serves /metrics in Prometheus text with tether_gateway_* names', async (t) => {
    const gw = await startTestGateway(t, YAML);
    await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=m' } });
    const m = await send(gw.adminUrl, { path: '/metrics' });
    assert.equal(m.status, 200);
    assert.match(m.body, /tether_gateway_requests_total\{service="agent",class="2xx"\} 1/);
    assert.match(m.body, /tether_gateway_instances\{service="agent",state="running"\} 1/);
    assert.match(m.body, /tether_gateway_sessions\{service="agent"\} 1/);
  });
});
