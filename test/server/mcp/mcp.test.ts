/**
 * @module
 * `POST /mcp` through the SDK's real client (Streamable HTTP) against a listening memory server:
 * the five tools, the same store as HTTP, tool errors as `isError` results, tenancy and auth.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

let srv: TestMemoryServer;
let agent: Client;
let agentKey: string;
const clients: Client[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'tether-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', srv.url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The JSON of a result's text content, checked against its structuredContent. */
function answer(r: CallToolResult): any {
  const first = r.content[0];
  assert.equal(first?.type, 'text');
  const parsed = JSON.parse((first as { text: string }).text);
  assert.deepEqual(r.structuredContent, parsed);
  return parsed;
}

before(async () => {
  srv = await startTestMemoryServer();
  agentKey = await srv.agentKey('acme', 'run-1');
  agent = await connect(agentKey);
});
after(async () => {
  for (const c of clients) await c.close();
  await srv.close();
});

describe('POST /mcp tools/list', () => {
  it('lists exactly the five memory tools and the ten resume tools, each with an object input schema', async () => {
    const { tools } = await agent.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'agent_milestone',
      'agent_resume',
      'fetch_output',
      'forget',
      'list_pointers',
      'list_predicates',
      'memory_history',
      'recall',
      'recent_turns',
      'record_turn',
      'remember',
      'remove_pointer',
      'set_pointer',
      'store_output',
      'update_working_state',
    ]);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object', t.name);
      assert.ok(t.description && t.description.length > 20, t.name);
    }
    const remember = tools.find((t) => t.name === 'remember');
    assert.deepEqual([...(remember?.inputSchema.required ?? [])].sort(), ['predicate', 'subject', 'value']);
    const recall = tools.find((t) => t.name === 'recall');
    const limit = recall?.inputSchema.properties?.limit as { type?: string } | undefined;
    assert.equal(limit?.type, 'integer');
  });
});

describe('POST /mcp remember and recall', () => {
  it('remembers a fact that recall over MCP and GET /v1/memories both see', async () => {
    const r = answer(await call(agent, 'remember', { subject: 'Alice', predicate: 'lives_in', value: 'Paris' }));
    assert.equal(r.stored, true);
    assert.equal(r.event.actor.agent, 'run-1');
    assert.equal(r.event.namespace, 'acme:run-1');

    const again = answer(await call(agent, 'remember', { subject: 'alice', predicate: 'lives_in', value: 'paris' }));
    assert.equal(again.already_known, true);

    const moved = answer(await call(agent, 'remember', { subject: 'alice', predicate: 'city', value: 'Lyon' }));
    assert.deepEqual(moved.superseded, ['Paris']);

    const recalled = answer(await call(agent, 'recall', { subject: 'alice', predicate: 'lives_in' }));
    assert.deepEqual(
      recalled.beliefs.map((b: { value: unknown }) => b.value),
      ['Lyon'],
    );

    const http = await srv.call('GET', '/v1/memories?subject=alice&predicate=lives_in', { key: agentKey });
    assert.equal(http.status, 200);
    assert.deepEqual(http.body, recalled);
  });

  it('searches with q and limits with a JSON number', async () => {
    await call(agent, 'remember', { subject: 'bob', predicate: 'prefers', value: 'green tea' });
    await call(agent, 'remember', { subject: 'bob', predicate: 'prefers', value: 'window seats' });
    const found = answer(await call(agent, 'recall', { q: 'tea', limit: 5 }));
    assert.deepEqual(
      found.beliefs.map((b: { value: unknown }) => b.value),
      ['green tea'],
    );
  });

  it('sees a fact written over HTTP', async () => {
    const w = await srv.call('POST', '/v1/memories', {
      key: agentKey,
      body: { subject: 'carol', predicate: 'timezone', value: 'Europe/Paris' },
    });
    assert.equal(w.status, 200);
    const r = answer(await call(agent, 'recall', { subject: 'carol' }));
    assert.equal(r.beliefs[0].value, 'Europe/Paris');
  });
});

describe('POST /mcp forget and memory_history', () => {
  it('forgets one value and history shows the assertion then the retraction', async () => {
    await call(agent, 'remember', { subject: 'dave', predicate: 'allergy', value: 'nuts' });
    await call(agent, 'remember', { subject: 'dave', predicate: 'allergy', value: 'pollen' });
    const f = answer(await call(agent, 'forget', { subject: 'dave', predicate: 'allergy', value: 'nuts' }));
    assert.deepEqual(f, { withdrawn: 1 });

    const left = answer(await call(agent, 'recall', { subject: 'dave', predicate: 'allergy' }));
    assert.deepEqual(
      left.beliefs.map((b: { value: unknown }) => b.value),
      ['pollen'],
    );

    const h = answer(await call(agent, 'memory_history', { subject: 'dave', predicate: 'allergy' }));
    assert.deepEqual(
      h.events.map((e: { value: unknown; retraction: boolean }) => [e.value, e.retraction]),
      [
        ['nuts', false],
        ['pollen', false],
        ['nuts', true],
      ],
    );
    const http = await srv.call('GET', '/v1/memories/history?subject=dave&predicate=allergy', { key: agentKey });
    assert.deepEqual(http.body, h);
  });

  it('forgetting what is not held withdraws nothing', async () => {
    const f = answer(await call(agent, 'forget', { subject: 'nobody', predicate: 'allergy' }));
    assert.deepEqual(f, { withdrawn: 0 });
  });
});

describe('POST /mcp list_predicates', () => {
  it("lists the tenant's predicates like GET /v1/registry", async () => {
    const r = answer(await call(agent, 'list_predicates', {}));
    assert.equal(r.tenant, 'acme');
    const names = r.predicates.map((p: { name: string }) => p.name);
    assert.ok(names.includes('lives_in') && names.includes('note'));
    const http = await srv.call('GET', '/v1/registry', { key: agentKey });
    assert.deepEqual(http.body, r);
  });
});

describe('POST /mcp tool errors', () => {
  it('a bad argument is an isError result naming the field', async () => {
    const r = await call(agent, 'remember', { subject: 'erin', predicate: 'lives_in', value: { city: 'Oslo' } });
    assert.equal(r.isError, true);
    const body = answer(r);
    assert.equal(body.error.code, 'invalid_request');
    assert.match(body.error.message, /^value: /);
  });

  it('an unknown argument is named', async () => {
    const r = await call(agent, 'recall', { subject: 'erin', colour: 'red' });
    assert.equal(r.isError, true);
    assert.deepEqual(answer(r).error, { code: 'invalid_request', message: 'colour: unknown field' });
  });

  it('an engine refusal (unknown predicate) is an isError result, not a stack trace', async () => {
    const r = await call(agent, 'remember', { subject: 'erin', predicate: 'no_such_thing', value: 'x' });
    assert.equal(r.isError, true);
    const body = answer(r);
    assert.equal(body.error.code, 'invalid_request');
    assert.doesNotMatch(JSON.stringify(body), /at \w+ \(|\.ts:\d+/);
  });

  it('an agent key naming another namespace gets namespace_mismatch', async () => {
    for (const [name, args] of [
      ['remember', { namespace: 'acme:other', subject: 'x', predicate: 'note', value: 'y' }],
      ['recall', { namespace: 'acme:other', subject: 'x' }],
      ['forget', { namespace: 'other:run-1', subject: 'x', predicate: 'note' }],
      ['memory_history', { namespace: 'acme:other', subject: 'x', predicate: 'note' }],
      ['list_predicates', { namespace: 'other:run-1' }],
    ] as const) {
      const r = await call(agent, name, args);
      assert.equal(r.isError, true, name);
      assert.equal(answer(r).error.code, 'namespace_mismatch', name);
    }
  });

  it('keeps agents apart: another agent does not see acme:run-1 facts', async () => {
    const other = await connect(await srv.agentKey('acme', 'run-2'));
    const r = answer(await call(other, 'recall', { subject: 'alice' }));
    assert.deepEqual(r.beliefs, []);
  });

  it('an admin key works on the namespace it names', async () => {
    const admin = await connect(srv.adminKey);
    const r = answer(await call(admin, 'recall', { namespace: 'acme:run-1', subject: 'alice' }));
    assert.equal(r.beliefs[0].value, 'Lyon');
    const none = await call(admin, 'recall', { subject: 'alice' });
    assert.equal(none.isError, true);
    assert.equal(answer(none).error.code, 'invalid_request');
  });
});

describe('POST /mcp over HTTP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
  const accept = { accept: 'application/json, text/event-stream' };

  it('refuses a request without a key with 401 before any MCP', async () => {
    const r = await srv.call('POST', '/mcp', { body: initialize, headers: accept });
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'unauthenticated');
  });

  it('refuses a bad key with 401', async () => {
    const r = await srv.call('POST', '/mcp', {
      key: `${agentKey.slice(0, -4)}0000`,
      body: initialize,
      headers: accept,
    });
    assert.equal(r.status, 401);
  });

  it('answers a raw initialize with JSON and a session id', async () => {
    const r = await srv.call('POST', '/mcp', { key: agentKey, body: initialize, headers: accept });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('mcp-session-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(r.body.result.serverInfo.name, 'tether-memory');
    assert.ok(r.body.result.capabilities.tools);
  });

  it('answers a malformed tools/call (arguments not an object, name not a string) with -32602, not -32603', async () => {
    const calls = [
      { name: 'remember', arguments: 'subject=alice' },
      { name: 'remember', arguments: [1, 2] },
      { name: 'recall', arguments: null },
      { name: 5, arguments: {} },
    ];
    for (const [i, params] of calls.entries()) {
      const body = { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params };
      const r = await srv.call('POST', '/mcp', { key: agentKey, body, headers: accept });
      assert.equal(r.status, 200);
      assert.equal(r.body.error?.code, -32602, JSON.stringify(params));
      assert.match(r.body.error.message, /Invalid tools\/call request/);
    }
  });

  it('answers GET /mcp, and DELETE /mcp without a session id, with 405 JSON', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await srv.call(method, '/mcp', { key: agentKey, headers: accept });
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.get('allow'), 'POST');
      assert.equal(r.body.error.code, 'method_not_allowed');
    }
  });

  it('lists /mcp in the OpenAPI document', async () => {
    const r = await srv.call('GET', '/openapi.json');
    assert.ok(r.body.paths['/mcp']?.post);
  });
});
