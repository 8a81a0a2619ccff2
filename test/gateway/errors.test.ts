import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { serviceYaml, startTestGateway } from './helpers/harness.ts';

const YAML = serviceYaml('e', { 'serving.knative.dev/session-affinity-cookie': 'app' });

/** Writes `raw` on a fresh connection and reads until the server closes it. */
async function rawExchange(baseUrl: string, raw: string): Promise<string> {
  const url = new URL(baseUrl);
  const sock = connect({ host: url.hostname, port: Number(url.port) });
  let text = '';
  sock.setEncoding('utf8');
  sock.on('data', (c: string) => {
    text += c;
  });
  sock.write(raw);
  await once(sock, 'close');
  return text;
}

describe('gateway error bodies', () => {
  it('answers a malformed request with a JSON 400 and Connection: close', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const text = await rawExchange(gw.publicUrl, 'GET / HTTP/1.1\r\nHost: e.default.example.com\r\nBad Header\r\n\r\n');
    const [head = '', body = ''] = text.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 400 /);
    assert.match(head, /\r\nConnection: close/i);
    assert.match(head, /\r\nContent-Type: application\/json/i);
    const parsed = JSON.parse(body) as { error: { code: string; message: string } };
    assert.equal(parsed.error.code, 'invalid_request');
    assert.equal(typeof parsed.error.message, 'string');
  });

  it('answers a malformed request on the admin port with a JSON 400 too', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const text = await rawExchange(gw.adminUrl, 'GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n');
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.equal(JSON.parse(text.split('\r\n\r\n')[1] ?? '').error.code, 'invalid_request');
  });
});
