import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceYaml, startTestGateway } from '../helpers/harness.ts';
import { rawClient } from '../helpers/raw-client.ts';

const HOST = 'p.default.example.com';
const YAML = serviceYaml('p', { 'serving.knative.dev/session-affinity-cookie': 'app' });

/** `n` extra header lines (over 32 in all, node's parser hands such a head over in parts). */
function manyHeaders(n: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, String(i)]));
}

describe('raw HTTP/1.1 proxy path, request side', () => {
  it('never carries a trailer of one request into the headers of the next', { timeout: 120_000 }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write(
      `POST /echo HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=tr\r\nTransfer-Encoding: chunked\r\n\r\n` +
        '2\r\nok\r\n0\r\nX-Smuggled: yes\r\n\r\n',
      'POST',
    );
    assert.equal(String((await c.read())[0]?.body), 'ok');
    c.get(HOST, '/env', { Cookie: 'app=tr', ...manyHeaders(40) });
    const headers = JSON.parse(String((await c.read())[0]?.body)).headers;
    assert.equal(headers['x-h39'], '39');
    assert.equal(headers['x-smuggled'], undefined);
  });

  it('keeps Content-Length even when the Connection header lists it (no body smuggled as a request)', {
    timeout: 120_000,
  }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    const inner = `GET /smuggled HTTP/1.1\r\nHost: ${HOST}\r\n\r\n`;
    c.write(
      `POST /env HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=sm\r\nConnection: keep-alive, Content-Length\r\n` +
        `Content-Length: ${inner.length}\r\n\r\n${inner}`,
      'POST',
    );
    const post = JSON.parse(String((await c.read())[0]?.body));
    assert.equal(post.headers['content-length'], String(inner.length));
    c.get(HOST, '/env', { Cookie: 'app=sm' });
    const next = JSON.parse(String((await c.read())[0]?.body));
    assert.equal(next.count, 2, 'the instance saw exactly the two requests sent');
  });

  it('forwards the transfer codings before chunked (gzip, chunked) with the re-chunked body', {
    timeout: 120_000,
  }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const c = await rawClient(t, gw.publicUrl);
    c.write(
      `POST /env HTTP/1.1\r\nHost: ${HOST}\r\nCookie: app=te\r\nTransfer-Encoding: gzip, chunked\r\n\r\n` +
        '2\r\nxx\r\n0\r\n\r\n',
      'POST',
    );
    const env = JSON.parse(String((await c.read())[0]?.body));
    assert.equal(env.headers['transfer-encoding'], 'gzip, chunked');
  });

  it('answers 400 naming host to a request with two Host headers, or an HTTP/1.1 one with none', {
    timeout: 120_000,
  }, async (t) => {
    const gw = await startTestGateway(t, YAML);
    const requests = [
      // Raw HTTP/1.1 path: two Hosts (the router and the instance could each read another), then none.
      `GET /env HTTP/1.1\r\nHost: ${HOST}\r\nHost: other.default.example.com\r\n\r\n`,
      'GET /env HTTP/1.1\r\nX-No-Host: 1\r\n\r\n',
      // node:http paths: HTTP/1.0 and a WebSocket upgrade, each with two Hosts; Expect (handed over) with none.
      `GET /env HTTP/1.0\r\nHost: ${HOST}\r\nHost: ${HOST}\r\n\r\n`,
      'POST /env HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n',
      `GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    ];
    for (const text of requests) {
      const c = await rawClient(t, gw.publicUrl);
      c.write(text, 'GET');
      const [res] = await c.read();
      assert.equal(res?.status, 400, text);
      const { error } = JSON.parse(String(res?.body));
      assert.equal(error.code, 'invalid_request', text);
      assert.match(error.message, /^host: /, text);
    }
    // HTTP/1.0 may omit Host: no such service then, not a malformed request.
    const c = await rawClient(t, gw.publicUrl);
    c.write('GET /env HTTP/1.0\r\n\r\n', 'GET');
    assert.equal((await c.read())[0]?.status, 404);
    // One Host is routed as before.
    const ok = await rawClient(t, gw.publicUrl);
    ok.get(HOST, '/env', { Cookie: 'app=one' });
    assert.equal((await ok.read())[0]?.status, 200);
  });
});
