import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { ManualClock } from '../../src/common/clock.ts';
import { admin, send, serviceYaml, startTestGateway, waitFor } from './helpers/harness.ts';

const HOST = 'st.default.example.com';
const YAML = serviceYaml('st', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'serving.knative.dev/sandbox-idle-policy': 'pause',
  'serving.knative.dev/session-timeout': '300ms',
});

describe('streaming through the gateway', () => {
  it('passes a WebSocket upgrade and echoes messages; an open socket keeps the session active', async (t) => {
    // A manual clock: the idle timeout passes without sleeping; reconcile runs when told to.
    const clock = new ManualClock(Date.now());
    const gw = await startTestGateway(t, YAML, { clock });
    const wsUrl = `${gw.publicUrl.replace('http', 'ws')}/ws`;
    const ws = new WebSocket(wsUrl, { headers: { host: HOST, cookie: 'app=w' } });
    t.after(() => ws.terminate());
    await new Promise<void>((ok, fail) => {
      ws.once('open', () => ok());
      ws.once('error', fail);
    });
    const echo = (text: string) =>
      new Promise<string>((ok) => {
        ws.once('message', (data) => ok(String(data)));
        ws.send(text);
      });
    assert.equal(await echo('hello'), 'hello');
    clock.advance(60 * 60_000); // far past the 300 ms idle timeout
    gw.reconcile();
    assert.equal(await echo('still here'), 'still here');
    const sessions = await admin<Array<{ key: string; state: string }>>(gw, '/_tether/sessions?reveal=keys');
    assert.deepEqual(
      sessions.map((s) => [s.key, s.state]),
      [['w', 'active']],
    );
    ws.close();
    await waitFor('socket released', async () => {
      const s = await admin<Array<{ state: string }>>(gw, '/_tether/sessions');
      return s[0]?.state === 'idle';
    });
    clock.advance(1000);
    gw.reconcile();
    // Paused once the gateway observed the stop.
    await waitFor('session paused', async () => {
      const after = await admin<Array<{ state: string }>>(gw, '/_tether/sessions');
      return after[0]?.state === 'paused';
    });
  });

  it('refuses a WebSocket for an unknown host with 404', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const ws = new WebSocket(`${gw.publicUrl.replace('http', 'ws')}/ws`, {
      headers: { host: 'x.default.example.com' },
    });
    const status = await new Promise<number>((ok) =>
      ws.once('unexpected-response', (_req, res) => ok(res.statusCode ?? 0)),
    );
    assert.equal(status, 404);
  });

  it('streams a response chunk by chunk (SSE) without buffering it', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const url = new URL(gw.publicUrl);
    const arrivals: number[] = [];
    let text = '';
    let contentType = '';
    await new Promise<void>((ok, fail) => {
      request(
        { host: url.hostname, port: url.port, path: '/events?n=4&gap=150', headers: { host: HOST, cookie: 'app=sse' } },
        (res) => {
          contentType = String(res.headers['content-type']);
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            arrivals.push(Date.now());
            text += c;
          });
          res.on('end', ok);
        },
      )
        .on('error', fail)
        .end();
    });
    assert.equal(contentType, 'text/event-stream');
    assert.equal((text.match(/^data: tick \d$/gm) ?? []).length, 4);
    assert.ok(arrivals.length >= 4, `events arrived one by one (${arrivals.length} chunks)`);
    assert.ok((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0) >= 300, 'first event arrived well before the last');
  });

  it('streams a large request body to the instance and back', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const body = 'x'.repeat(3 * 1024 * 1024);
    const r = await send(gw.publicUrl, {
      host: HOST,
      path: '/echo',
      method: 'POST',
      headers: { cookie: 'app=big', 'content-type': 'text/plain' },
      body,
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, body.length);
    const chunked = await send(gw.publicUrl, { host: HOST, path: '/stream?n=5', headers: { cookie: 'app=big' } });
    assert.equal(chunked.body, 'chunk 1\nchunk 2\nchunk 3\nchunk 4\nchunk 5\n');
  });
});
