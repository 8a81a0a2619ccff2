/**
 * Rate limits (issue 9, items 5 and 6): per key (429 + Retry-After, other keys unaffected, refilled
 * with time) and purges per admin tenant. Time is a manual clock: no sleeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const clock = new ManualClock(Date.now());
let srv: TestMemoryServer;
let dflt: TestMemoryServer;
before(async () => {
  srv = await startTestMemoryServer({ clock, limits: { perKeyPerSecond: 2, purgesPerMinute: 2 } });
  dflt = await startTestMemoryServer();
});
after(async () => {
  await srv.close();
  await dflt.close();
});

describe('per-key rate limit', () => {
  it('answers 429 rate_limited with Retry-After past a burst of 10 s worth, for that key only', async () => {
    const key = await srv.agentKey('rl', 'a');
    const other = await srv.agentKey('rl', 'b');
    for (let i = 0; i < 20; i++)
      assert.equal((await srv.call('GET', '/v1/whoami', { key })).status, 200, `request ${i}`);
    const r = await srv.call('GET', '/v1/whoami', { key });
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'rate_limited');
    assert.match(r.body.error.message, /more than 2 requests a second/);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.equal((await srv.call('GET', '/v1/whoami', { key: other })).status, 200);
    clock.advance(1000);
    assert.equal((await srv.call('GET', '/v1/whoami', { key })).status, 200);
  });

  it('never bothers a normal agent at the default (300 requests in a row)', async () => {
    const key = await dflt.agentKey('rl', 'normal');
    for (let i = 0; i < 300; i++) {
      const r = await dflt.call('POST', '/v1/memories', {
        key,
        body: { subject: 's', predicate: 'note', value: `v${i}` },
      });
      assert.equal(r.status, 200);
    }
  });
});

describe('purge rate limit', () => {
  it('answers 429 with Retry-After past the purges a minute of an admin tenant', async () => {
    clock.advance(60_000);
    const admin = srv.adminKey;
    for (let i = 0; i < 2; i++) {
      const r = await srv.call('DELETE', `/v1/namespaces/rl:gone${i}`, { key: admin });
      assert.equal(r.status, 200);
      assert.equal(r.body.erased, 0);
    }
    const r = await srv.call('DELETE', '/v1/namespaces/rl:gone9', { key: admin });
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'rate_limited');
    assert.match(r.body.error.message, /purges a minute/);
    assert.equal(r.headers.get('retry-after'), '30');
    clock.advance(30_000);
    assert.equal((await srv.call('DELETE', '/v1/namespaces/rl:gone9', { key: admin })).status, 200);
  });
});
