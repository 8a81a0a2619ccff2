import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Gateway } from '../../src/gateway/gateway.ts';
import { type Reply, send, serviceYaml, startTestGateway } from './helpers/harness.ts';
import { rawClient } from './helpers/raw-client.ts';

const HOST = 'keys.default.example.com';
const SIGNED = 'signed.default.example.com';
const YAML = [
  serviceYaml('keys', { 'serving.knative.dev/session-affinity-cookie': 'app' }),
  serviceYaml('signed', {
    'serving.knative.dev/session-affinity-cookie': 'app',
    'tether.dev/signed-session-keys': 'true',
  }),
].join('---\n');

interface Env {
  pid: number;
  headers: Record<string, string>;
}

const env = (r: Reply) => JSON.parse(r.body) as Env;
const newKey = (r: Reply) => /^app=([^;]+);/.exec(String(r.headers['set-cookie']))?.[1];

function get(gw: Gateway, host: string, headers: Record<string, string> = {}, path = '/env') {
  return send(gw.publicUrl, { host, path, headers });
}

describe('session keys', () => {
  it("forwards a new session's first request with the Cookie header as sent and its key in X-Session-Key", async (t) => {
    const gw = await startTestGateway(t, YAML);
    const first = await get(gw, HOST, { cookie: 'theme=dark; other=1', 'x-session-key': '' });
    const key = newKey(first);
    assert.ok(key, 'Set-Cookie with the new key');
    assert.equal(env(first).headers.cookie, 'theme=dark; other=1', 'the Cookie header as the client sent it');
    assert.equal(env(first).headers['x-session-key'], key);
    const none = await get(gw, HOST);
    assert.equal(env(none).headers.cookie, undefined);
    assert.equal(env(none).headers['x-session-key'], newKey(none));
    // The session's next request: the cookie the client now sends, and no X-Session-Key of the gateway's.
    const next = await get(gw, HOST, { cookie: `theme=dark; app=${key}` });
    assert.equal(next.headers['set-cookie'], undefined);
    assert.equal(env(next).pid, env(first).pid);
    assert.equal(env(next).headers.cookie, `theme=dark; app=${key}`);
    assert.equal(env(next).headers['x-session-key'], undefined);
    // The same on the node:http path (HTTP/1.0 goes there).
    const c = await rawClient(t, gw.publicUrl);
    c.write(`GET /env HTTP/1.0\r\nHost: ${HOST}\r\nCookie: theme=light\r\n\r\n`, 'GET');
    const [slow] = await c.read();
    const slowKey = /^app=([^;]+);/.exec(slow?.headers['set-cookie'] ?? '')?.[1];
    assert.ok(slowKey);
    const slowEnv = JSON.parse(String(slow?.body)) as Env;
    assert.equal(slowEnv.headers.cookie, 'theme=light');
    assert.equal(slowEnv.headers['x-session-key'], slowKey);
  });

  it('with tether.dev/add-session-cookie adds the new key to the Cookie header of the first request', async (t) => {
    const gw = await startTestGateway(
      t,
      serviceYaml('adds', {
        'serving.knative.dev/session-affinity-cookie': 'app',
        'tether.dev/add-session-cookie': 'true',
      }),
    );
    const first = await get(gw, 'adds.default.example.com', { cookie: 'theme=dark; other=1' });
    const key = newKey(first);
    assert.ok(key);
    assert.equal(env(first).headers.cookie, `theme=dark; other=1; app=${key}`);
    assert.equal(env(first).headers['x-session-key'], key);
    const services = JSON.parse((await send(gw.adminUrl, { path: '/_tether/services' })).body) as Array<{
      add_session_cookie: boolean;
    }>;
    assert.deepEqual(
      services.map((s) => s.add_session_cookie),
      [true],
    );
  });

  it('without signed keys a client-chosen key is its session (Cookie: app=11)', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const a = await get(gw, HOST, { cookie: 'app=11' });
    assert.equal(a.headers['set-cookie'], undefined);
    assert.equal(env(a).headers.cookie, 'app=11');
    assert.equal(env(await get(gw, HOST, { cookie: 'app=11' })).pid, env(a).pid);
  });

  it('with tether.dev/signed-session-keys only a gateway-issued key is a session; a forged one starts a new one', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const chosen = await get(gw, SIGNED, { cookie: 'app=11' });
    const key = newKey(chosen);
    assert.ok(key && key !== '11', 'a chosen key gets a new signed one');
    assert.equal(env(chosen).headers.cookie, undefined, 'the app never sees the chosen key');
    assert.equal(env(chosen).headers['x-session-key'], key);
    const again = await get(gw, SIGNED, { cookie: `app=${key}` });
    assert.equal(again.headers['set-cookie'], undefined);
    assert.equal(env(again).pid, env(chosen).pid);
    // Same length, one character of the MAC changed: a new session on another instance.
    const forged = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    const f = await get(gw, SIGNED, { cookie: `app=${forged}` });
    assert.ok(newKey(f) && newKey(f) !== forged);
    assert.notEqual(env(f).pid, env(chosen).pid);
    // A chosen X-Session-Key or Authorization is no session either; a signed X-Session-Key is.
    const x = await get(gw, SIGNED, { 'x-session-key': '11', cookie: 'theme=dark; app=11' });
    assert.ok(newKey(x));
    assert.equal(env(x).headers['x-session-key'], newKey(x), 'the chosen X-Session-Key is replaced');
    assert.equal(env(x).headers.cookie, 'theme=dark', 'the unsigned app= pair is dropped, the rest kept');
    const auth = await get(gw, SIGNED, { authorization: 'Bearer 1' });
    assert.ok(newKey(auth));
    const viaHeader = await get(gw, SIGNED, { 'x-session-key': key });
    assert.equal(viaHeader.headers['set-cookie'], undefined);
    assert.equal(env(viaHeader).pid, env(chosen).pid);
  });

  it('--signed-session-keys makes it the default; the annotation "false" keeps a service open', async (t) => {
    const yaml = [
      serviceYaml('keys', { 'serving.knative.dev/session-affinity-cookie': 'app' }),
      serviceYaml('open', {
        'serving.knative.dev/session-affinity-cookie': 'app',
        'tether.dev/signed-session-keys': 'false',
      }),
    ].join('---\n');
    const gw = await startTestGateway(t, yaml, { signedSessionKeys: true });
    assert.ok(newKey(await get(gw, HOST, { cookie: 'app=11' })));
    assert.equal((await get(gw, 'open.default.example.com', { cookie: 'app=11' })).headers['set-cookie'], undefined);
  });

  it('a key signed by another gateway secret is refused', async (t) => {
    const one = await startTestGateway(t, YAML, { sessionSecret: 'x'.repeat(32) });
    const key = newKey(await get(one, SIGNED)) as string;
    const same = await startTestGateway(t, YAML, { sessionSecret: 'x'.repeat(32) });
    assert.equal((await get(same, SIGNED, { cookie: `app=${key}` })).headers['set-cookie'], undefined);
    const other = await startTestGateway(t, YAML, { sessionSecret: 'y'.repeat(32) });
    assert.ok(newKey(await get(other, SIGNED, { cookie: `app=${key}` })));
  });

  it('sets Secure when a trusted proxy says https, or always with secureCookies; never on a client claim', async (t) => {
    const untrusted = await startTestGateway(t, YAML);
    const claimed = await get(untrusted, HOST, { 'x-forwarded-proto': 'https' });
    assert.doesNotMatch(String(claimed.headers['set-cookie']), /Secure/);
    const trusted = await startTestGateway(t, YAML, { trustedProxies: ['127.0.0.0/8'] });
    assert.match(
      String((await get(trusted, HOST, { 'x-forwarded-proto': 'https' })).headers['set-cookie']),
      /; Secure$/,
    );
    // The last value is the one the trusted proxy appended.
    const chain = await get(trusted, HOST, { 'x-forwarded-proto': 'https, http' });
    assert.doesNotMatch(String(chain.headers['set-cookie']), /Secure/);
    assert.doesNotMatch(String((await get(trusted, HOST)).headers['set-cookie']), /Secure/);
    const always = await startTestGateway(t, YAML, { secureCookies: true });
    assert.match(String((await get(always, HOST)).headers['set-cookie']), /HttpOnly; SameSite=Lax; Secure$/);
  });
});

describe('Connection header listing end-to-end headers', () => {
  it('never drops Cookie, Authorization or X-Session-Key (the app sees the session the gateway routed)', async (t) => {
    const gw = await startTestGateway(t, YAML);
    for (const listed of [
      'cookie',
      'Cookie, authorization, x-session-key, host, content-length',
      'keep-alive, cookie',
    ]) {
      const r = await get(gw, HOST, {
        cookie: 'app=11; theme=dark',
        authorization: 'Bearer t',
        'x-session-key': 'k',
        connection: listed,
        'x-hop': '1',
      });
      const h = env(r).headers;
      assert.equal(h.cookie, 'app=11; theme=dark', listed);
      assert.equal(h.authorization, 'Bearer t', listed);
      assert.equal(h['x-session-key'], 'k', listed);
      assert.equal(h.host, HOST, listed);
    }
    // A listed header of its own is still dropped.
    const r = await get(gw, HOST, { cookie: 'app=11', connection: 'x-hop', 'x-hop': '1' });
    assert.equal(env(r).headers['x-hop'], undefined);
    assert.equal(env(r).headers.cookie, 'app=11');
  });

  it('keeps them on the node:http path too', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write(
      `GET /env HTTP/1.0\r\nHost: ${HOST}\r\nConnection: cookie, authorization\r\nCookie: app=11\r\nAuthorization: Bearer t\r\n\r\n`,
      'GET',
    );
    const [r] = await c.read();
    const h = (JSON.parse(String(r?.body)) as Env).headers;
    assert.equal(h.cookie, 'app=11');
    assert.equal(h.authorization, 'Bearer t');
  });
});
