/**
 * Resume contract points, through `inject()`: a renew without `ttl_ms` keeps the TTL the lease was
 * taken with; `namespace` in the query string is honoured on routes whose body takes it (another
 * agent's is 403 namespace_mismatch, query and body differing is 400); an unknown query parameter is
 * 400 naming it on every route, and nothing is written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

describe('resume contract over HTTP', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let server: TestMemoryServer;
  let run2: string;
  before(async () => {
    server = await startTestMemoryServer({ clock });
    run2 = await server.agentKey('agents', 'run-2', 86_400);
  });
  after(() => server.close());

  const inject = async (method: string, url: string, key: string, body?: unknown) => {
    const res = await server.running.server.app.inject({
      method: method as 'POST',
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.json() };
  };

  describe('POST /v1/lease/renew', () => {
    it('keeps the TTL the lease was taken with when ttl_ms is not given', async () => {
      const k = await server.agentKey('agents', 'ttl', 86_400);
      const got = await inject('POST', '/v1/lease/acquire', k, { holder: 'pod-a', ttl_ms: 1500 });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      assert.equal(got.body.ttl_ms, 1500);
      clock.advance(1000);
      const renewed = await inject('POST', '/v1/lease/renew', k, { epoch: got.body.epoch });
      assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
      assert.equal(Date.parse(renewed.body.expires_at), clock.now() + 1500, 'still 1.5 s, not the 60 s default');
      const longer = await inject('POST', '/v1/lease/renew', k, { epoch: got.body.epoch, ttl_ms: 5000 });
      assert.equal(Date.parse(longer.body.expires_at), clock.now() + 5000);
      clock.advance(1000);
      const again = await inject('POST', '/v1/lease/renew', k, { epoch: got.body.epoch });
      assert.equal(Date.parse(again.body.expires_at), clock.now() + 5000, 'the last TTL asked for');
      assert.equal((await inject('GET', '/v1/lease', k)).body.ttl_ms, 5000);
    });
  });

  describe('namespace in the query string', () => {
    it('refuses another agent’s namespace on POST /v1/resume with 403 namespace_mismatch', async () => {
      const r = await inject('POST', '/v1/resume?namespace=agents:run-1', run2, { defer: true });
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(r.body.error.code, 'namespace_mismatch');
      const own = await inject('POST', '/v1/resume?namespace=agents:run-2', run2, { defer: true });
      assert.equal(own.status, 200, JSON.stringify(own.body));
      assert.equal(own.body.namespace, 'agents:run-2');
    });

    it('refuses it on every body route, writes, lease and forget included', async () => {
      const routes: [string, string, unknown][] = [
        ['POST', '/v1/memories', { subject: 'user', predicate: 'note', value: 'x' }],
        ['POST', '/v1/memories/forget', { subject: 'user', predicate: 'note' }],
        ['POST', '/v1/lease/acquire', {}],
        ['PATCH', '/v1/working-state', { goal: 'g' }],
        ['POST', '/v1/turns', { role: 'user', content: 'hi' }],
        ['PUT', '/v1/pointers/p', { type: 'env', fields: { A: '1' } }],
      ];
      for (const [method, path, body] of routes) {
        const r = await inject(method, `${path}?namespace=agents:run-1`, run2, body);
        assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'namespace_mismatch');
      }
    });

    it('is 400 naming namespace when the query and the body differ, and taken when they agree', async () => {
      const body = { subject: 'user', predicate: 'note', value: 'both', namespace: 'agents:run-2' };
      const differ = await inject('POST', '/v1/memories?namespace=agents:run-1', run2, body);
      assert.equal(differ.status, 400);
      assert.equal(differ.body.error.code, 'invalid_request');
      assert.match(differ.body.error.message, /^namespace: differs/);
      const agree = await inject('POST', '/v1/memories?namespace=agents:run-2', run2, body);
      assert.equal(agree.status, 200, JSON.stringify(agree.body));
      assert.equal(agree.body.event.namespace, 'agents:run-2');
    });

    it('takes any body field from the query the same way: PUT /v1/registry?tenant=', async () => {
      const current = await inject('GET', '/v1/registry?tenant=agents', server.adminKey);
      assert.equal(current.status, 200, JSON.stringify(current.body));
      const { predicates } = current.body;
      const put = await inject('PUT', '/v1/registry?tenant=agents', server.adminKey, { predicates });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const differ = await inject('PUT', '/v1/registry?tenant=agents', server.adminKey, {
        tenant: 'other',
        predicates,
      });
      assert.equal(differ.status, 400);
      assert.match(differ.body.error.message, /^tenant: differs/);
    });
  });

  describe('unknown query parameters', () => {
    it('are 400 naming the parameter on every route, and nothing is written', async () => {
      const cases: [string, string, unknown][] = [
        ['POST', '/v1/memories?nmespace=agents:run-1', { subject: 'user', predicate: 'note', value: 'lost' }],
        ['GET', '/v1/memories?nmespace=agents:run-1', undefined],
        ['GET', '/v1/whoami?nmespace=x', undefined],
        ['POST', '/v1/resume?nmespace=agents:run-1', {}],
        ['POST', '/v1/lease/renew?ttl=5', { epoch: 1 }],
        ['GET', '/v1/turns?nmespace=agents:run-1', undefined],
      ];
      for (const [method, url, body] of cases) {
        const r = await inject(method, url, run2, body);
        assert.equal(r.status, 400, `${method} ${url}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error.code, 'invalid_request');
        const name = new URL(url, 'http://x').searchParams.keys().next().value as string;
        assert.match(r.body.error.message, new RegExp(`^${name}: unknown`), `${method} ${url}`);
      }
      const recall = await inject('GET', '/v1/memories?subject=user&predicate=note', run2);
      assert.ok(recall.body.beliefs.every((b: { value: string }) => b.value !== 'lost'));
    });

    it('leave the MCP endpoint and health checks to their own rules only where they declare them', async () => {
      const r = await inject('POST', '/mcp?session=1', run2, { jsonrpc: '2.0', id: 1, method: 'ping' });
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /^session: unknown query parameter/);
    });
  });
});
