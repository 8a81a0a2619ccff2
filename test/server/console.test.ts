import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let gatewayAdmin: string | undefined;
let seen: { url?: string; authorization?: string } = {};
const fakeAdmin = createServer((req, res) => {
  seen = { url: req.url, authorization: req.headers.authorization };
  const ok = req.headers.authorization === 'Bearer gw-token';
  res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
  res.end(ok ? '[{"key":"k1"}]' : '{"error":{"code":"unauthenticated","message":"token"}}');
});

before(async () => {
  await new Promise<void>((r) => fakeAdmin.listen(0, '127.0.0.1', r));
  srv = await startTestMemoryServer({ consoleGateway: () => gatewayAdmin });
});
after(async () => {
  await srv.close();
  fakeAdmin.close();
});

describe('GET /console/ on the memory server', () => {
  it('serves the page and its modules with a same-origin-only CSP, no key needed', async () => {
    const redirect = await fetch(`${srv.url}/console`, { redirect: 'manual' });
    assert.equal(redirect.status, 302);
    assert.equal(redirect.headers.get('location'), '/console/');
    const page = await srv.call('GET', '/console/');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(page.text, /<script type="module" src="app.js">/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const app = await srv.call('GET', '/console/pages/agent.js');
    assert.equal(app.status, 200);
    assert.match(app.headers.get('content-type') ?? '', /^text\/javascript/);
  });

  it('answers 404 JSON for a file that is not one of the console’s, and never leaves its folder', async () => {
    for (const path of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/package.json']) {
      const r = await srv.call('GET', path);
      assert.equal(r.status, 404, path);
      assert.equal(r.body.error.code, 'not_found');
    }
  });

  it('says in config.json which APIs it reaches, and reaches the gateway admin API once it is known', async () => {
    gatewayAdmin = undefined;
    assert.deepEqual((await srv.call('GET', '/console/config.json')).body, { memory: '', gateway: null });
    assert.equal((await srv.call('GET', '/console/gateway/_tether/sessions')).status, 404);

    gatewayAdmin = `http://127.0.0.1:${(fakeAdmin.address() as AddressInfo).port}`;
    assert.deepEqual((await srv.call('GET', '/console/config.json')).body, {
      memory: '',
      gateway: '/console/gateway',
    });
    const through = await srv.call('GET', '/console/gateway/_tether/sessions', {
      headers: { authorization: 'Bearer gw-token' },
    });
    assert.equal(through.status, 200);
    assert.deepEqual(through.body, [{ key: 'k1' }]);
    assert.deepEqual(seen, { url: '/_tether/sessions', authorization: 'Bearer gw-token' });
    // The gateway's own refusal comes back as it was: this route grants nothing by itself.
    const refused = await srv.call('GET', '/console/gateway/_tether/sessions');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthenticated');
    assert.equal(seen.authorization, undefined);
  });
});
