import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
before(async () => {
  srv = await startTestMemoryServer();
});
after(() => srv.close());

describe('GET /v1/registry by the * admin', () => {
  it('refuses a tenant that is not a valid name with 400 naming tenant, and stores nothing', async () => {
    for (const bad of ['Bad!', 'a:b', '*', '-x', 'x'.repeat(129)]) {
      const r = await srv.call('GET', `/v1/registry?tenant=${encodeURIComponent(bad)}`, { key: srv.adminKey });
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.error.code, 'invalid_request');
      assert.match(r.body.error.message, /^tenant: /);
      assert.deepEqual(await srv.running.store.registryVersions(bad), []);
    }
  });

  it('answers a tenant nobody wrote to with the default registry and writes no row', async () => {
    const r = await srv.call('GET', '/v1/registry?tenant=never-written', { key: srv.adminKey });
    assert.equal(r.status, 200);
    assert.ok(r.body.predicates.some((p: { name: string }) => p.name === 'note'));
    const recall = await srv.call('GET', '/v1/memories?namespace=never-written:a&subject=x', { key: srv.adminKey });
    assert.equal(recall.status, 200);
    assert.deepEqual(await srv.running.store.registryVersions('never-written'), []);
  });

  it('stores the default registry with the tenant’s first write', async () => {
    await srv.call('GET', '/v1/registry?tenant=first-write', { key: srv.adminKey });
    const key = await srv.agentKey('first-write', 'a');
    const w = await srv.call('POST', '/v1/memories', { key, body: { subject: 's', predicate: 'note', value: 'v' } });
    assert.equal(w.status, 200);
    const versions = await srv.running.store.registryVersions('first-write');
    assert.equal(versions.length, 1);
    assert.equal(versions[0]?.recordedAt, 0);
  });
});
