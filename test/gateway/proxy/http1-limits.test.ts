import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { serviceYaml, startTestGateway } from '../helpers/harness.ts';
import { rawClient } from '../helpers/raw-client.ts';

const HOST = 'p.default.example.com';
const YAML = serviceYaml('p', { 'serving.knative.dev/session-affinity-cookie': 'app' });

/** A keep-alive connection the raw path has handed to node:http (its first request had Expect). */
async function handedOver(t: TestContext, url: string) {
  const c = await rawClient(t, url);
  c.write(
    `POST /echo HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=ex\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok`,
    'POST',
  );
  assert.equal(String((await c.read())[0]?.body), 'ok');
  return c;
}

describe('raw HTTP/1.1 proxy path limits', () => {
  it('answers thousands of pipelined requests that finish at once without overflowing the stack', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    // The first request keeps the connection busy, so the rest queue; each of them is a 400 (no Host)
    // answered inside its own start().
    const n = 3500;
    c.write(
      `GET /stream?n=1 HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=many\r\n\r\n${'GET / HTTP/1.1\r\n\r\n'.repeat(n)}`,
      'GET',
      ...Array<string>(n).fill('GET'),
    );
    const all = await c.read(n + 1);
    assert.equal(all[0]?.status, 200);
    assert.ok(all.slice(1).every((r) => r.status === 400));
    assert.equal(c.isClosed, false);
  });

  it('answers requests queued before a malformed one, in order, then the 400', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=order\r\n\r\n`;
    c.write(`${get('/stream?n=1')}${get('/')}NOT HTTP\r\n\r\n`, 'GET', 'GET', 'GET');
    const [first, second, bad] = await c.read(3);
    assert.equal(first?.status, 200);
    assert.equal(second?.status, 200);
    assert.match(String(second?.body), /Requests served: 2/);
    assert.equal(bad?.status, 400);
    await c.closed();
  });

  it('closes a connection whose request was answered but whose body stopped coming', {
    timeout: 120_000,
  }, async (t) => {
    const gw = await startTestGateway(t, YAML, { keepAliveTimeoutMs: 300 });
    const c = await rawClient(t, gw.publicUrl);
    // An unknown host is answered at once; 90 of the 100 announced body bytes never come.
    c.write('POST / HTTP/1.1\r\nHost: nope.example.com\r\nContent-Length: 100\r\n\r\n0123456789', 'POST');
    assert.equal((await c.read())[0]?.status, 404);
    await c.closed();
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', { timeout: 120_000 }, async (t) => {
    const gw = await startTestGateway(t, YAML, { keepAliveTimeoutMs: 300 });
    const c = await rawClient(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=idle' });
    assert.equal((await c.read())[0]?.status, 200);
    await c.closed();
  });

  it('answers 431 to oversized headers on a connection handed to node:http too', { timeout: 120_000 }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await handedOver(t, gw.publicUrl);
    c.get(HOST, '/', { Cookie: 'app=ex', 'X-Big': 'a'.repeat(20_000) });
    const [big] = await c.read();
    assert.equal(big?.status, 431);
    assert.equal(JSON.parse(String(big?.body)).error.code, 'headers_too_large');
    await c.closed();
  });
});

describe('gateway close', () => {
  it('closes a keep-alive connection handed to node:http at once', { timeout: 120_000 }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await handedOver(t, gw.publicUrl);
    const t0 = Date.now();
    await gw.close();
    assert.ok(Date.now() - t0 < 10_000, `close took ${Date.now() - t0} ms`);
    await c.closed();
  });
});
