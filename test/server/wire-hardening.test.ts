import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendRaw } from '../helpers/fuzz.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let key: string;
before(async () => {
  srv = await startTestMemoryServer({ metricsToken: 'm3trics-t0ken' });
  key = await srv.agentKey('wire', 'a');
});
after(() => srv.close());

const port = () => Number(new URL(srv.url).port);

describe('lone surrogates', () => {
  it('refuses two different lone surrogates with 400 naming the field, storing nothing', async () => {
    for (const value of ['\ud800 x', '\udbff x']) {
      const body = `{"subject":"s","predicate":"note","value":${JSON.stringify(value)}}`;
      const r = await srv.call('POST', '/v1/memories', { key, body });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, /^value: contains a lone UTF-16 surrogate/);
    }
    const batch = await srv.call('POST', '/v1/memories', {
      key,
      body: {
        statements: [
          { subject: 'ok', predicate: 'note', value: 'fine' },
          { subject: 'x\udc00', predicate: 'note', value: 'v' },
        ],
      },
    });
    assert.equal(batch.status, 400);
    assert.match(batch.body.error.message, /^statements\[1\]\.subject: /);
    const q = await srv.call('GET', `/v1/memories?q=${encodeURIComponent('ok')}&kind=%ED%A0%80`, { key });
    assert.notEqual(q.status, 500);
    const recall = await srv.call('GET', '/v1/memories?subject=s&predicate=note', { key });
    assert.deepEqual(recall.body.beliefs, []);
    assert.equal((await srv.call('GET', '/v1/memories?subject=ok&predicate=note', { key })).body.beliefs.length, 0);
  });

  it('keeps a well-formed pair (an emoji) as it is', async () => {
    const r = await srv.call('POST', '/v1/memories', {
      key,
      body: { subject: 'e', predicate: 'note', value: 'hi \ud83d\ude00' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.event.value, 'hi 😀');
  });
});

describe('framework-level errors keep the wire shape', () => {
  it('answers Content-Length with Transfer-Encoding with 400 {"error":{"code","message"}}', async () => {
    const body = '{"subject":"s","predicate":"note","value":"v"}';
    const raw = Buffer.from(
      `POST /v1/memories HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    const { status, text } = await sendRaw(port(), raw);
    assert.equal(status, 400);
    const json = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    assert.equal(json.error.code, 'invalid_request');
    assert.match(json.error.message, /Content-Length and Transfer-Encoding/);
  });

  it('answers a malformed request line and oversized headers in the same shape', async () => {
    const bad = await sendRaw(port(), Buffer.from('GET / HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n'));
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text.slice(bad.text.indexOf('\r\n\r\n') + 4)).error.code, 'invalid_request');
    const big = await sendRaw(port(), Buffer.from(`GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(big.status, 431);
    assert.equal(JSON.parse(big.text.slice(big.text.indexOf('\r\n\r\n') + 4)).error.code, 'headers_too_large');
  });
});

describe('/metrics with a metrics token', () => {
  it('refuses a caller without the token, and shows event counts to one with it', async () => {
    const none = await srv.call('GET', '/metrics');
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthenticated');
    assert.equal((await srv.call('GET', '/metrics', { headers: { authorization: 'Bearer wrong' } })).status, 401);
    const ok = await srv.call('GET', '/metrics', { headers: { authorization: 'Bearer m3trics-t0ken' } });
    assert.equal(ok.status, 200);
    assert.match(ok.text, /tether_memory_events_stored \d+/);
  });
});
