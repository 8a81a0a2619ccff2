import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { send, serviceYaml, startTestGateway } from './helpers/harness.ts';

const YAML = serviceYaml('adm', { 'serving.knative.dev/session-affinity-cookie': 'app' });
const HOST = 'adm.default.example.com';

describe('admin API with adminToken', () => {
  it('answers 401 JSON without the bearer token and serves the sessions with it', async (t) => {
    const gw = await startTestGateway(t, YAML, { adminToken: 's3cret-token' });
    assert.equal((await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=k1' } })).status, 200);
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: 's3cret-token' },
    ];
    for (const headers of attempts) {
      for (const path of ['/_tether/sessions', '/_tether/instances', '/metrics']) {
        const r = await send(gw.adminUrl, { path, headers });
        assert.equal(r.status, 401, `${path} with ${JSON.stringify(headers)}`);
        assert.match(String(r.headers['content-type']), /application\/json/);
        assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'unauthenticated');
        assert.doesNotMatch(r.body, /k1/);
      }
    }
    const ok = await send(gw.adminUrl, {
      path: '/_tether/sessions?reveal=keys',
      headers: { authorization: 'Bearer s3cret-token' },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(
      (JSON.parse(ok.body) as Array<{ key: string }>).map((s) => s.key),
      ['k1'],
    );
  });

  it('needs no token when none is set', async (t) => {
    const gw = await startTestGateway(t, YAML);
    assert.equal((await send(gw.adminUrl, { path: '/_tether/sessions' })).status, 200);
  });
});

describe('admin API Host check (DNS rebinding)', () => {
  it('refuses a Host that is not a loopback name or address with 403, before the token and on every route', async (t) => {
    const gw = await startTestGateway(t, YAML);
    assert.equal((await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=k1' } })).status, 200);
    const port = new URL(gw.adminUrl).port;
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      '10.0.0.1',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      '[::2]',
    ]) {
      for (const path of ['/', '/_tether/sessions', '/_tether/instances?reveal=keys', '/metrics']) {
        const r = await send(gw.adminUrl, { path, host });
        assert.equal(r.status, 403, `${host} ${path}`);
        assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'forbidden');
        assert.doesNotMatch(r.body, /k1/);
      }
    }
    for (const host of [
      `localhost:${port}`,
      'LOCALHOST',
      `127.0.0.1:${port}`,
      '127.1.2.3',
      `[::1]:${port}`,
      'tether.localhost',
    ]) {
      assert.equal((await send(gw.adminUrl, { path: '/_tether/sessions', host })).status, 200, host);
    }
  });
});

describe('admin API views', () => {
  it('GET / lists the routes, the logs route included', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const r = await send(gw.adminUrl, { path: '/' });
    assert.equal(r.status, 200);
    const paths = (JSON.parse(r.body) as { routes: Array<{ path: string }> }).routes.map((x) => x.path);
    for (const p of [
      '/_tether/services',
      '/_tether/sessions',
      '/_tether/instances',
      '/_tether/instances/{name}/logs',
      '/metrics',
    ]) {
      assert.ok(paths.includes(p), p);
    }
    const missing = await send(gw.adminUrl, { path: '/nope' });
    assert.equal(missing.status, 404);
    assert.match(missing.body, /GET \/ lists the admin routes/);
  });

  it('shows a short prefix of each session key; ?reveal=keys the whole keys; another reveal is a 400', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const key = 'k1-secret-session-key';
    await send(gw.publicUrl, { host: HOST, headers: { cookie: `app=${key}` } });
    await send(gw.publicUrl, { host: HOST, headers: { cookie: 'app=11' } });
    const hidden = await send(gw.adminUrl, { path: '/_tether/sessions' });
    assert.ok(!hidden.body.includes(key));
    const sessions = JSON.parse(hidden.body) as Array<{ key?: string; key_prefix: string; claim: string }>;
    assert.deepEqual(sessions.map((s) => [s.key, s.key_prefix]).sort(), [
      [undefined, '1…'],
      [undefined, 'k1-secre…'],
    ]);
    for (const s of sessions) assert.match(s.claim, /^adm-[0-9a-f]{32}$/);
    const instances = await send(gw.adminUrl, { path: '/_tether/instances' });
    assert.ok(!instances.body.includes(key));
    assert.ok(!instances.body.includes('"11"'));
    const shown = JSON.parse((await send(gw.adminUrl, { path: '/_tether/sessions?reveal=keys' })).body) as Array<{
      key: string;
    }>;
    assert.deepEqual(shown.map((s) => s.key).sort(), ['11', key]);
    const all = JSON.parse((await send(gw.adminUrl, { path: '/_tether/instances?reveal=keys' })).body) as Array<{
      sessions: string[];
    }>;
    assert.deepEqual(all.flatMap((i) => i.sessions).sort(), ['11', key]);
    const bad = await send(gw.adminUrl, { path: '/_tether/sessions?reveal=all' });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /reveal/);
  });

  it('shows each session its idle deadline, what happens then, and its expiry', async (t) => {
    const yaml = [
      serviceYaml('del', {
        'serving.knative.dev/session-affinity-cookie': 'app',
        'serving.knative.dev/session-timeout': '10m',
      }),
      serviceYaml('exp', {
        'serving.knative.dev/session-affinity-cookie': 'app',
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '0s',
        'serving.knative.dev/session-expiry': '1h',
      }),
    ].join('---\n');
    const gw = await startTestGateway(t, yaml);
    const before = Date.now();
    await send(gw.publicUrl, { host: 'del.default.example.com', headers: { cookie: 'app=a' } });
    await send(gw.publicUrl, { host: 'exp.default.example.com', headers: { cookie: 'app=b' } });
    const after = Date.now();
    type View = {
      service: string;
      on_idle: string;
      idle_deadline: string | null;
      expires_at: string | null;
      last_active: string;
    };
    const list = JSON.parse((await send(gw.adminUrl, { path: '/_tether/sessions' })).body) as View[];
    const del = list.find((s) => s.service === 'del') as View;
    assert.equal(del.on_idle, 'delete');
    assert.equal(Date.parse(del.idle_deadline ?? ''), Date.parse(del.last_active) + 600_000);
    assert.ok(Date.parse(del.last_active) >= before && Date.parse(del.last_active) <= after);
    assert.equal(del.expires_at, null);
    const exp = list.find((s) => s.service === 'exp') as View;
    assert.equal(exp.on_idle, 'pause');
    assert.equal(exp.idle_deadline, null, 'no timeout: never idles out');
    const expires = Date.parse(exp.expires_at ?? '');
    assert.ok(expires >= before + 3_600_000 && expires <= after + 3_600_000);
  });
});
