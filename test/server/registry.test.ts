/**
 * @module
 * The registry over HTTP and MCP through the one call module: what GET answers PUT accepts (a read,
 * modify, write round trip), and one rule for which tenant a key may name, the same on both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

let srv: TestMemoryServer;
let agentKey: string;
let mcp: Client;

before(async () => {
  srv = await startTestMemoryServer();
  agentKey = await srv.agentKey('regrt', 'run-1');
  mcp = new Client({ name: 'tether-test', version: '0.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', srv.url), {
      requestInit: { headers: { Authorization: `Bearer ${agentKey}` } },
    }),
  );
});
after(async () => {
  await mcp.close();
  await srv.close();
});

async function listPredicates(args: Record<string, unknown>): Promise<{ status: number; code?: string }> {
  const r = (await mcp.callTool({ name: 'list_predicates', arguments: args })) as CallToolResult;
  const body = r.structuredContent as { error?: { code: string } };
  return r.isError ? { status: 403, code: body.error?.code } : { status: 200, code: undefined };
}

describe('GET then PUT /v1/registry', () => {
  it('accepts what GET answered (allowed: null included) and changes nothing', async () => {
    const got = await srv.call('GET', '/v1/registry?tenant=regrt', { key: srv.adminKey });
    assert.equal(got.status, 200);
    assert.ok(got.body.predicates.some((p: { allowed: unknown }) => p.allowed === null));
    const put = await srv.call('PUT', '/v1/registry', { key: srv.adminKey, body: got.body });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.predicates, got.body.predicates);
  });

  it('round-trips a modified registry: a predicate added to what GET gave', async () => {
    const got = await srv.call('GET', '/v1/registry?tenant=regrt', { key: srv.adminKey });
    const predicates = [
      ...got.body.predicates,
      {
        name: 'mood',
        cardinality: 'single',
        value_type: 'enum',
        allowed: ['calm', 'busy'],
        aliases: [],
        description: null,
      },
    ];
    const put = await srv.call('PUT', '/v1/registry', { key: srv.adminKey, body: { tenant: 'regrt', predicates } });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const again = await srv.call('GET', '/v1/registry', { key: agentKey });
    assert.deepEqual(
      again.body.predicates.find((p: { name: string }) => p.name === 'mood'),
      predicates[predicates.length - 1],
    );
  });

  it('refuses a rename (an old name made an alias) with 400 naming the alias, and the facts keep their name', async () => {
    const remembered = await srv.call('POST', '/v1/memories', {
      key: agentKey,
      body: { subject: 'bob', predicate: 'lives_in', value: 'Berlin' },
    });
    assert.equal(remembered.status, 200, JSON.stringify(remembered.body));
    const got = await srv.call('GET', '/v1/registry?tenant=regrt', { key: srv.adminKey });
    const predicates = got.body.predicates.map((p: { name: string; aliases: string[] }) =>
      p.name === 'lives_in' ? { ...p, name: 'home_city', aliases: ['lives_in', 'city'] } : p,
    );
    const put = await srv.call('PUT', '/v1/registry', { key: srv.adminKey, body: { tenant: 'regrt', predicates } });
    assert.equal(put.status, 400, JSON.stringify(put.body));
    assert.equal(put.body.error.code, 'invalid_request');
    assert.match(put.body.error.message, /^predicates\[\d+\]\.aliases\[0\]: .*renaming a predicate is not supported/);
    const moved = await srv.call('POST', '/v1/memories', {
      key: agentKey,
      body: { subject: 'bob', predicate: 'lives_in', value: 'Oslo' },
    });
    assert.deepEqual(moved.body.superseded, ['Berlin'], JSON.stringify(moved.body));
  });

  it('refuses an agent key with 403 before looking at the body', async () => {
    const r = await srv.call('PUT', '/v1/registry', { key: agentKey, body: { predicates: 'not a list' } });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'forbidden');
  });
});

describe('which registry a key may read: one rule for HTTP and MCP', () => {
  const cases: { what: string; query: Record<string, string>; status: number; code?: string }[] = [
    { what: 'its own (no name)', query: {}, status: 200 },
    { what: 'its own namespace', query: { namespace: 'regrt:run-1' }, status: 200 },
    {
      what: "another agent's namespace of its tenant",
      query: { namespace: 'regrt:run-2' },
      status: 403,
      code: 'namespace_mismatch',
    },
    {
      what: 'a namespace of another tenant',
      query: { namespace: 'other:run-1' },
      status: 403,
      code: 'namespace_mismatch',
    },
  ];
  for (const c of cases) {
    it(`${c.what}: ${c.status}${c.code ? ` ${c.code}` : ''} on both`, async () => {
      const http = await srv.call('GET', `/v1/registry?${new URLSearchParams(c.query)}`, { key: agentKey });
      assert.equal(http.status, c.status);
      assert.equal(http.body.error?.code, c.code);
      assert.deepEqual(await listPredicates(c.query), { status: c.status, code: c.code });
    });
  }

  it('an agent key may name its own tenant, not another', async () => {
    assert.equal((await srv.call('GET', '/v1/registry?tenant=regrt', { key: agentKey })).status, 200);
    const other = await srv.call('GET', '/v1/registry?tenant=other', { key: agentKey });
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'namespace_mismatch');
  });

  it('an invalid tenant name is 400 naming tenant', async () => {
    for (const tenant of ['Not A Name', '*', 'a:b']) {
      const r = await srv.call('GET', `/v1/registry?tenant=${encodeURIComponent(tenant)}`, { key: srv.adminKey });
      assert.equal(r.status, 400, tenant);
      assert.match(r.body.error.message, /^tenant: /);
    }
  });
});
