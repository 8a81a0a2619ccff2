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
  it('never carries a trailer of one request into the headers of the next', { timeout: 15_000 }, async (t) => {
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
    timeout: 15_000,
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
    timeout: 15_000,
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
});
