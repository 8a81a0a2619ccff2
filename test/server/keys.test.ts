import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
const clock = new ManualClock(Date.now());

before(async () => {
  srv = await startTestMemoryServer({ clock });
});
after(() => srv.close());

describe('keys', () => {
  it('mints an agent key with the documented shape', async () => {
    const r = await srv.call('POST', '/v1/keys', {
      key: srv.adminKey,
      body: { tenant: 'agents', agent: 'k1', ttl_seconds: 60 },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.body).sort(), ['agent', 'expires_at', 'id', 'key', 'namespace', 'tenant']);
    assert.match(r.body.key, /^tth_[0-9a-f]{16}_[0-9a-f]{64}$/);
    assert.equal(r.body.key.slice(4, 20), r.body.id);
    assert.equal(r.body.namespace, 'agents:k1');
    assert.equal(r.body.expires_at, new Date(clock.now() + 60_000).toISOString());
  });

  it('refuses a revoked key at once with key_revoked', async () => {
    const key = await srv.agentKey('agents', 'k2');
    assert.equal((await srv.call('GET', '/v1/whoami', { key })).status, 200); // now cached
    const del = await srv.call('DELETE', `/v1/keys/${key.slice(4, 20)}`, { key: srv.adminKey });
    assert.equal(del.status, 204);
    const r = await srv.call('GET', '/v1/whoami', { key });
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'key_revoked');
  });

  it('refuses a key past its expiry with key_expired', async () => {
    const key = await srv.agentKey('agents', 'k3', 30);
    assert.equal((await srv.call('GET', '/v1/whoami', { key })).status, 200);
    clock.advance(30_001);
    const r = await srv.call('GET', '/v1/whoami', { key });
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'key_expired');
  });

  it('refuses missing, malformed, unknown and wrong-secret keys with unauthenticated', async () => {
    const good = await srv.agentKey('agents', 'k4');
    const wrongSecret = `${good.slice(0, 21)}${'0'.repeat(64)}`;
    for (const key of [undefined, 'nope', `tth_${'a'.repeat(16)}_${'b'.repeat(64)}`, wrongSecret]) {
      const r = await srv.call('GET', '/v1/whoami', key ? { key } : {});
      assert.equal(r.status, 401);
      assert.equal(r.body.error.code, 'unauthenticated');
    }
  });

  it('answers 404 for revoking an unknown key and 400 for a malformed id', async () => {
    assert.equal((await srv.call('DELETE', `/v1/keys/${'0'.repeat(16)}`, { key: srv.adminKey })).status, 404);
    const bad = await srv.call('DELETE', '/v1/keys/xyz', { key: srv.adminKey });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /^id/);
  });
});

describe('GET /v1/keys paging and expired keys', () => {
  it('pages in creation order with next, and hides expired keys unless asked', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await srv.agentKey('paging', `p${i}`)).slice(4, 20));
      clock.advance(1); // pages follow creation time (then id)
    }
    const admin = (await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'paging' } })).body.key;
    const short = (await srv.agentKey('paging', 'short', 10)).slice(4, 20);
    const first = await srv.call('GET', '/v1/keys?limit=3', { key: admin });
    assert.deepEqual(
      first.body.keys.map((k: { id: string }) => k.id),
      ids.slice(0, 3),
    );
    const second = await srv.call('GET', `/v1/keys?limit=3&after=${first.body.next}`, { key: admin });
    assert.deepEqual(second.body.keys.map((k: { id: string }) => k.id).slice(0, 2), ids.slice(3, 5));
    clock.advance(10_001);
    const live = await srv.call('GET', '/v1/keys?limit=1000', { key: admin });
    assert.ok(!live.body.keys.some((k: { id: string }) => k.id === short));
    assert.equal(live.body.next, null);
    const all = await srv.call('GET', '/v1/keys?limit=1000&include_expired=true', { key: admin });
    assert.ok(all.body.keys.some((k: { id: string }) => k.id === short));
  });

  it('refuses an after that is no key of the listing with 400 naming after, instead of starting over', async () => {
    const admin = (await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'cursor' } })).body.key;
    const own = (await srv.agentKey('cursor', 'c1')).slice(4, 20);
    const foreign = (await srv.agentKey('elsewhere', 'c2')).slice(4, 20);
    for (const after of ['0123456789abcdef', foreign]) {
      const r = await srv.call('GET', `/v1/keys?after=${after}`, { key: admin });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, /^after: no key /);
    }
    const ok = await srv.call('GET', `/v1/keys?after=${own}`, { key: admin });
    assert.equal(ok.status, 200, ok.text);
  });

  it('keeps its place after a cursor key that has expired since the last page', async () => {
    const admin = (await srv.call('POST', '/v1/keys', { key: srv.adminKey, body: { tenant: 'lapse' } })).body.key;
    clock.advance(1);
    const short = (await srv.agentKey('lapse', 'short', 10)).slice(4, 20);
    clock.advance(1);
    const later = (await srv.agentKey('lapse', 'later')).slice(4, 20);
    const first = await srv.call('GET', '/v1/keys?limit=2', { key: admin });
    assert.equal(first.body.next, short);
    clock.advance(10_001);
    const second = await srv.call('GET', `/v1/keys?limit=2&after=${short}`, { key: admin });
    assert.deepEqual([second.status, second.body.keys.map((k: { id: string }) => k.id)], [200, [later]]);
  });

  it('sweeps keys that expired long ago from the store', async () => {
    const id = (await srv.agentKey('sweep', 's', 1)).slice(4, 20);
    const keep = (await srv.agentKey('sweep', 'long', 3600)).slice(4, 20);
    const store = srv.running.store;
    await store.deleteExpiredKeys(clock.now());
    assert.ok(await store.getKey(id), 'not expired yet');
    clock.advance(2000);
    assert.ok((await store.deleteExpiredKeys(clock.now())) >= 1);
    assert.equal(await store.getKey(id), null);
    assert.ok(await store.getKey(keep));
  });
});
