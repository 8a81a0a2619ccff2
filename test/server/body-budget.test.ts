/**
 * The body budget (src/server/body-budget.ts, issue 9 item 9): requests with bodies wait, in order,
 * while the bytes in work leave no room; one larger than the budget runs alone; past `maxWaiting`
 * waiters 503 + Retry-After; requests without a body never wait; a request whose connection closes
 * gives its place and its bytes back.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BodyBudget } from '../../src/server/body-budget.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

describe('BodyBudget', () => {
  it('admits in arrival order as room is made, and a body larger than the budget alone', async () => {
    const budget = new BodyBudget({ maxBytes: 100, maxWaiting: 2 });
    const order: string[] = [];
    const a = await budget.acquire(60);
    const noted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const b = budget.acquire(60).then(noted('b'));
    const c = budget.acquire(500).then(noted('c'));
    await assert.rejects(budget.acquire(1), (err: { code?: string; retryAfter?: number }) => {
      return err.code === 'unavailable' && err.retryAfter === 1;
    });
    await nextTurn();
    assert.deepEqual([order, budget.inWork, budget.waiting], [[], 60, 2]);
    a();
    a(); // twice is once
    const releaseB = await b;
    assert.deepEqual([order, budget.inWork], [['b'], 60]);
    releaseB();
    const releaseC = await c;
    assert.deepEqual([order, budget.inWork], [['b', 'c'], 500]);
    releaseC();
    assert.equal(budget.inWork, 0);
  });

  it('drops a waiter whose signal aborts, and admits the ones it held back', async () => {
    const budget = new BodyBudget({ maxBytes: 100 });
    const a = await budget.acquire(60);
    const gone = new AbortController();
    const big = budget.acquire(500, gone.signal);
    const small = budget.acquire(10);
    await nextTurn();
    assert.equal(budget.waiting, 2);
    gone.abort(new Error('client gone'));
    await assert.rejects(big, /client gone/);
    const releaseSmall = await small;
    assert.deepEqual([budget.waiting, budget.inWork], [0, 70]);
    releaseSmall();
    a();
    assert.equal(budget.inWork, 0);
    await assert.rejects(budget.acquire(1, gone.signal), /client gone/, 'an aborted signal never waits');
  });

  it('leaves an abort after admission to the caller, who releases', async () => {
    const budget = new BodyBudget({ maxBytes: 100 });
    const a = await budget.acquire(60);
    const gone = new AbortController();
    const b = budget.acquire(60, gone.signal);
    await nextTurn();
    a(); // admits b
    gone.abort(); // in the same turn, before b's caller ran
    const releaseB = await b;
    assert.equal(budget.inWork, 60);
    releaseB();
    assert.deepEqual([budget.inWork, budget.waiting], [0, 0]);
  });
});

describe('the memory server under a body budget', () => {
  it('holds a write while the bytes in work leave no room, and never a request without a body', async () => {
    let open: () => void = () => {};
    const held = new Promise<void>((r) => {
      open = r;
    });
    let slowStarted = false;
    const srv = await startTestMemoryServer({
      maxBodyBytesInWork: 200,
      plugins: [
        async (app) => {
          app.post('/test/slow', async () => {
            slowStarted = true;
            await held;
            return { ok: true };
          });
        },
      ],
    });
    try {
      const key = await srv.agentKey('budget', 'a');
      const slow = srv.call('POST', '/test/slow', { key, body: { pad: 'x'.repeat(150) } });
      while (!slowStarted) await nextTurn();
      let wrote = false;
      const write = srv
        .call('POST', '/v1/memories', { key, body: { subject: 's', predicate: 'note', value: 'v'.repeat(80) } })
        .then((r) => {
          wrote = true;
          return r;
        });
      const budget = srv.running.server.bodyBudget;
      while (budget.waiting === 0) await nextTurn();
      const who = await srv.call('GET', '/v1/whoami', { key });
      assert.equal(who.status, 200, 'a request without a body does not wait');
      assert.deepEqual([wrote, budget.waiting, budget.inWork > 150], [false, 1, true], 'the write waits for room');
      open();
      assert.equal((await slow).status, 200);
      assert.equal((await write).status, 200);
    } finally {
      await srv.close();
    }
  });
});

/** Opens a raw connection and writes `head` + `body` (the body may be shorter than its Content-Length). */
function rawPost(url: string, key: string, length: number, body: string): Socket {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /v1/memories HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\n` +
      `content-length: ${length}\r\n\r\n${body}`,
  );
  return socket;
}

/** Polls `check` every turn for at most 5 s; throws naming `what` (a leak must fail, not hang). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await nextTurn();
  }
}

describe('the memory server when a waiting client goes away', () => {
  it('gives back the place and bytes of a request whose connection closed', async () => {
    const srv = await startTestMemoryServer();
    const sockets: Socket[] = [];
    try {
      const keyA = await srv.agentKey('budget-a', 'a');
      const keyB = await srv.agentKey('budget-b', 'b');
      const budget = srv.running.server.bodyBudget;
      // A: a body larger than the budget, admitted alone, of which only '{' ever comes
      const upload = rawPost(srv.url, keyA, 600_000, '{');
      sockets.push(upload);
      await until('the upload to be admitted', () => budget.inWork > 0);
      // B (another tenant): a whole small write that waits behind A, then its client gives up
      const small = JSON.stringify({ subject: 's', predicate: 'note', value: 'one' });
      const waiter = rawPost(srv.url, keyB, Buffer.byteLength(small), small);
      sockets.push(waiter);
      await until('the small write to wait', () => budget.waiting === 1);
      waiter.destroy();
      await until('the closed waiter to leave the queue', () => budget.waiting === 0);
      upload.destroy();
      await until('the bytes to be given back', () => budget.inWork === 0);
      const after = await srv.call('POST', '/v1/memories', {
        key: keyB,
        body: { subject: 's', predicate: 'note', value: 'two' },
      });
      assert.equal(after.status, 200);
      assert.deepEqual([budget.inWork, budget.waiting], [0, 0]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await srv.close();
    }
  });
});
