/**
 * Issue 22 item 1, black-box on a real gateway: four cookie-less WebSockets from one loopback address
 * (127.0.0.2) hold every instance of a max-scale 4 service; WebSockets of another address (127.0.0.3) are served
 * anyway, as the holder gives up sessions down to its share (2 of 4); once every address is at its share a
 * newcomer (127.0.0.4) waits and gets 503 + Retry-After, and the holder keeps its two.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { type Reply, serviceYaml, startTestGateway, waitFor } from './helpers/harness.ts';

const HOST = 'chat.default.example.com';
const YAML = serviceYaml('chat', {
  'serving.knative.dev/session-affinity-cookie': 'app',
  'serving.knative.dev/session-timeout': '30m',
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
  'autoscaling.knative.dev/max-scale': '4',
});

/** A WebSocket opened from `from` (a loopback source address); resolves after the 101. */
async function openWebSocket(t: TestContext, publicUrl: string, from: string): Promise<{ closed: () => boolean }> {
  const url = new URL(publicUrl);
  const sock: Socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from });
  t.after(() => sock.destroy());
  sock.on('error', () => {});
  let closed = false;
  sock.once('close', () => {
    closed = true;
  });
  await new Promise((r) => sock.once('connect', r));
  sock.write(
    `GET /ws HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  let head = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      sock.off('data', onData);
      if (head.startsWith('HTTP/1.1 101')) resolve();
      else reject(new Error(`no 101: ${head}`));
    };
    sock.on('data', onData);
  });
  sock.resume();
  return { closed: () => closed };
}

/** One cookie-less GET from `from`. */
function getFrom(publicUrl: string, from: string): Promise<Reply> {
  const url = new URL(publicUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: '/', localAddress: from, agent: false, headers: { host: HOST } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('address share over real WebSockets', () => {
  it('one address holding every instance gives way to another down to its share; at the share a newcomer gets 503', async (t) => {
    const gw = await startTestGateway(t, YAML, { newSessionsPerMinute: 0, queueTimeoutMs: 10_000 });
    const held: Array<{ closed: () => boolean }> = [];
    for (let i = 0; i < 4; i++) held.push(await openWebSocket(t, gw.publicUrl, '127.0.0.2'));
    const closedCount = () => held.filter((w) => w.closed()).length;

    // Served (101) although every instance was held: one WebSocket of 127.0.0.2 gave way.
    const other = [await openWebSocket(t, gw.publicUrl, '127.0.0.3')];
    await waitFor('one WebSocket of 127.0.0.2 closed', () => closedCount() === 1);
    other.push(await openWebSocket(t, gw.publicUrl, '127.0.0.3'));
    await waitFor('127.0.0.2 down to its share', () => closedCount() === 2);

    // 127.0.0.2 and 127.0.0.3 hold two each (their share): a third address waits out the queue.
    const late = await getFrom(gw.publicUrl, '127.0.0.4');
    assert.equal(late.status, 503, late.body);
    assert.ok(Number(late.headers['retry-after']) >= 1);
    assert.equal(JSON.parse(late.body).error.code, 'unavailable');
    assert.equal(closedCount(), 2, '127.0.0.2 keeps its share');
    assert.ok(other.every((w) => !w.closed()));
  });
});
