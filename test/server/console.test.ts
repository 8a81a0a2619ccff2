import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let gatewayAdmin: string | undefined;
let seen: { method?: string; url?: string; authorization?: string } = {};
const fakeAdmin = createServer((req, res) => {
  seen = { method: req.method, url: req.url, authorization: req.headers.authorization };
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
    assert.deepEqual(seen, { method: 'GET', url: '/_tether/sessions', authorization: 'Bearer gw-token' });
    // The gateway's own refusal comes back as it was: this route grants nothing by itself.
    const refused = await srv.call('GET', '/console/gateway/_tether/sessions');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthenticated');
    assert.equal(seen.authorization, undefined);
  });
});

/** A request with its target sent as written (fetch and `new URL` would resolve its dot segments first). */
function rawRequest(method: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(srv.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers: { authorization: 'Bearer gw-token' } },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('/console/gateway/_tether/* reaches only the calls the console makes', () => {
  it('refuses dot segments, encoded or not, %2f, backslashes and empty segments before asking the gateway', async () => {
    gatewayAdmin = `http://127.0.0.1:${(fakeAdmin.address() as AddressInfo).port}`;
    for (const path of [
      '/console/gateway/_tether/../metrics',
      '/console/gateway/_tether/%2e%2e/metrics',
      '/console/gateway/_tether/%2E%2E/metrics',
      '/console/gateway/_tether/.%2e/metrics',
      '/console/gateway/_tether/..//..//x',
      '/console/gateway/_tether/sessions/..',
      '/console/gateway/_tether/./sessions',
      '/console/gateway/_tether/instances%2f..%2f..%2fmetrics',
      '/console/gateway/_tether/..\\metrics',
      '/console/gateway/_tether//sessions',
    ]) {
      seen = {};
      const r = await rawRequest('GET', path);
      assert.equal(r.status, 400, path);
      assert.equal(JSON.parse(r.body).error.code, 'invalid_request', path);
      assert.deepEqual(seen, {}, `${path} never reached the gateway`);
    }
  });

  it('refuses a clean path or method the console does not use (404), and passes its DELETEs', async () => {
    gatewayAdmin = `http://127.0.0.1:${(fakeAdmin.address() as AddressInfo).port}`;
    for (const [method, path] of [
      ['GET', '/console/gateway/_tether/'],
      ['GET', '/console/gateway/_tether/secrets'],
      ['GET', '/console/gateway/_tether/sessions/abcdefghijkl'],
      ['GET', '/console/gateway/_tether/sessions?reveal=all'],
      ['DELETE', '/console/gateway/_tether/sessions'],
      ['DELETE', '/console/gateway/_tether/instances/x/logs'],
    ]) {
      seen = {};
      const r = await rawRequest(method as string, path as string);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.deepEqual(seen, {}, `${method} ${path} never reached the gateway`);
    }
    for (const path of ['/_tether/sessions/abcdefghijkl?service=app-1', '/_tether/instances/app-1-x9y8z']) {
      const r = await rawRequest('DELETE', `/console/gateway${path}`);
      assert.equal(r.status, 200, path);
      assert.deepEqual(seen, { method: 'DELETE', url: path, authorization: 'Bearer gw-token' });
    }
    const logs = await rawRequest('GET', '/console/gateway/_tether/instances/app-1-x9y8z/logs');
    assert.equal(logs.status, 200);
    assert.equal(seen.url, '/_tether/instances/app-1-x9y8z/logs');
  });
});
