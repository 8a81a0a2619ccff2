/**
 * The body budget (src/server/body-budget.ts, issue 9 item 9): requests with bodies wait, in order,
 * while the bytes in work leave no room; one larger than the budget runs alone; past `maxWaiting`
 * waiters 503 + Retry-After; requests without a body never wait.
 */
import assert from 'node:assert/strict';
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
