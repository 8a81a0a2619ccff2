/**
 * The request timeout (`requestTimeoutMs` in src/server/app.ts): a client that stops sending its body
 * gets 408 in the wire shape and loses its connection, which gives its room in the body budget back
 * so other tenants' writes go on.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { REQUEST_TIMEOUT_MS } from '../../src/server/app.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

/**
 * Writes `head` and then sends nothing more, keeping the connection open (unlike `sendRaw`, which
 * ends it); resolves with the status and body of what the server answered before it closed.
 */
function stall(url: string, head: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString();
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
    socket.write(head);
  });
}

/** Starts a 600 kB remember of a tenant of its own that stops after its first bytes; resolves once it holds its room. */
async function stalledUpload(srv: TestMemoryServer): Promise<{ answer: ReturnType<typeof stall> }> {
  const key = await srv.agentKey(`stalled-${++stalls}`, 'a');
  const head =
    `POST /v1/memories HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\n` +
    'content-type: application/json\r\ncontent-length: 600000\r\n\r\n{"subject":';
  const answer = stall(srv.url, head, 5000);
  while (srv.running.server.bodyBudget.inWork === 0) await nextTurn();
  return { answer }; // not the promise itself: awaiting this would wait for the answer
}
let stalls = 0;

describe('the memory server with a request timeout', () => {
  it('answers a stalled upload 408 naming the request, and frees the body budget', async () => {
    const srv = await startTestMemoryServer({ requestTimeoutMs: 300 });
    try {
      const other = await srv.agentKey('timeout-b', 'b');
      const budget = srv.running.server.bodyBudget;
      const { answer } = await stalledUpload(srv);
      // another tenant's write waits behind the stalled upload, and goes on once it is cut off
      const write = await srv.call('POST', '/v1/memories', {
        key: other,
        body: { subject: 's', predicate: 'note', value: 'after the stall' },
      });
      const { status, body } = await answer;
      assert.equal(status, 408);
      const error = JSON.parse(body).error;
      assert.equal(error.code, 'invalid_request');
      assert.match(error.message, /^request: .*did not arrive in time/);
      assert.equal(write.status, 200);
      assert.deepEqual([budget.inWork, budget.waiting], [0, 0]);
    } finally {
      await srv.close();
    }
  });

  it('gives a client 30 s by default', async () => {
    const srv = await startTestMemoryServer();
    try {
      assert.equal(REQUEST_TIMEOUT_MS, 30_000);
      const server = srv.running.server.app.server;
      assert.equal(server.requestTimeout, REQUEST_TIMEOUT_MS);
      assert.ok(server.headersTimeout <= server.requestTimeout, 'else Node takes the headers timeout for it');
    } finally {
      await srv.close();
    }
  });

  it('answers a big body that waits for room longer than half the timeout 503 + Retry-After, not 408', async () => {
    const srv = await startTestMemoryServer({ requestTimeoutMs: 2000, maxBodyBytesInWork: 700_000 });
    try {
      const other = await srv.agentKey('timeout-d', 'd');
      const { answer } = await stalledUpload(srv);
      // 200 kB sent whole at once: it cannot fit beside the stalled 600 kB, and must not pay for it. It gives
      // up after 1 s, well before the stalled one is cut off at 2 s and its room freed.
      const statements = Array.from({ length: 400 }, (_, i) => ({
        subject: 's',
        predicate: 'note',
        value: `${'x'.repeat(480)} ${i}`,
      }));
      const big = await srv.call('POST', '/v1/memories', { key: other, body: { statements } });
      assert.equal(big.status, 503, big.text);
      assert.equal(big.headers.get('retry-after'), '1');
      assert.equal(big.body.error.code, 'unavailable');
      assert.equal((await answer).status, 408, 'the stalled one is still cut off');
    } finally {
      await srv.close();
    }
  });
});
