/**
 * The MCP resume tools through the official SDK client (Streamable HTTP sessions): agent_resume takes
 * the lease for the session, writes carry it without an epoch argument, a second session gets
 * lease_held, an enum violation is an isError result naming the allowed values, a key for
 * agents:run-2 cannot reach agents:run-1 (nor its session), and closing the session releases the lease.
 * A session whose lease was lost answers agent_resume as POST /v1/resume would (or takes it again when
 * free), and never lends one namespace's epoch to another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ManualClock } from '../../../src/common/clock.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

let srv: TestMemoryServer;
const clock = new ManualClock(Date.UTC(2026, 0, 1));
const open: { client: Client; transport: StreamableHTTPClientTransport }[] = [];

async function connect(key: string) {
  const client = new Client({ name: 'tether-resume-test', version: '0.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', srv.url), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  open.push({ client, transport });
  return { client, transport };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The answer of a successful call. */
function ok(r: CallToolResult): any {
  assert.notEqual(r.isError, true, JSON.stringify(r.structuredContent));
  return r.structuredContent;
}

/** The error of a failed call: an isError result, not a protocol error. */
function refused(r: CallToolResult, code: string): { code: string; message: string } {
  assert.equal(r.isError, true, JSON.stringify(r.structuredContent));
  const err = (r.structuredContent as { error: { code: string; message: string } }).error;
  assert.equal(err.code, code, err.message);
  return err;
}

let run1: string;
let run2: string;
before(async () => {
  srv = await startTestMemoryServer({ clock });
  run1 = await srv.agentKey('agents', 'run-1', 86_400);
  run2 = await srv.agentKey('agents', 'run-2', 86_400);
});
after(async () => {
  for (const o of open) await o.client.close();
  await srv.close();
});

describe('MCP resume tools', () => {
  it('refuses a write before agent_resume, telling the model to call it', async () => {
    const { client } = await connect(run1);
    const err = refused(await call(client, 'update_working_state', { goal: 'x' }), 'lease_not_held');
    assert.match(err.message, /agent_resume/);
  });

  it('resumes, writes every record without an epoch argument, and reads them back', async () => {
    const { client, transport } = await connect(run1);
    const resumed = ok(await call(client, 'agent_resume', { token_budget: 2000 }));
    assert.equal(resumed.fresh, true);
    assert.equal(resumed.lease.holder, `mcp:${transport.sessionId}`);
    assert.ok(resumed.epoch > 0);
    assert.equal(
      ok(await call(client, 'update_working_state', { goal: 'ship', plan: ['a', 'b'], step: 1 })).version,
      1,
    );
    assert.equal(
      ok(await call(client, 'agent_milestone', { name: 'planned' })).working_state.last_milestone,
      'planned',
    );
    assert.equal(ok(await call(client, 'record_turn', { role: 'user', content: 'go', message_id: 'm1' })).seq, 1);
    assert.equal(
      ok(await call(client, 'record_turn', { role: 'user', content: 'go', message_id: 'm1' })).duplicate,
      true,
    );
    const out = ok(await call(client, 'store_output', { content: 'build log', tool: 'make' }));
    assert.equal(ok(await call(client, 'fetch_output', { ref: out.ref })).content, 'build log');
    ok(await call(client, 'set_pointer', { name: 'repo', type: 'git_ref', fields: { ref: 'main' } }));
    assert.deepEqual(
      ok(await call(client, 'list_pointers')).pointers.map((p: { name: string }) => p.name),
      ['repo'],
    );
    ok(await call(client, 'remove_pointer', { name: 'repo' }));
    assert.deepEqual(
      ok(await call(client, 'recent_turns', { limit: 5 })).turns.map((t: { content: string }) => t.content),
      ['go'],
    );
    const http = await srv.call('GET', '/v1/working-state', { key: run1 });
    assert.deepEqual([http.body.goal, http.body.last_milestone], ['ship', 'planned']);
    const again = ok(await call(client, 'agent_resume', {}));
    assert.equal(again.epoch, resumed.epoch, 'a second agent_resume in the same session keeps its lease');
    assert.match(again.briefing, /Goal: ship/);

    const other = await connect(run1);
    const held = refused(await call(other.client, 'agent_resume', {}), 'lease_held');
    assert.match(held.message, new RegExp(`mcp:${transport.sessionId}`));

    await transport.terminateSession();
    const lease = await srv.call('GET', '/v1/lease', { key: run1 });
    assert.equal(lease.body.held, false, 'closing the session released its lease');
    const taken = ok(await call(other.client, 'agent_resume', {}));
    assert.ok(taken.epoch > resumed.epoch);
    assert.equal(taken.working_state.goal, 'ship');
    await other.transport.terminateSession();
  });

  it('answers lease_lost to a session whose lease another holder took over', async () => {
    const a = await connect(run1);
    ok(await call(a.client, 'agent_resume', { lease_ttl_ms: 1000 }));
    clock.advance(1000);
    const b = await srv.call('POST', '/v1/lease/acquire', { key: run1, body: { holder: 'pod-b' } });
    assert.equal(b.status, 200, b.text);
    const err = refused(await call(a.client, 'record_turn', { role: 'user', content: 'stale' }), 'lease_lost');
    assert.match(err.message, /agent_resume/);
    assert.equal((await srv.call('GET', '/v1/turns', { key: run1 })).body.turns.at(-1)?.content, 'go');
    await srv.call('POST', '/v1/lease/release', { key: run1, body: { epoch: b.body.epoch } });
  });

  it('answers agent_resume with lease_held, as POST /v1/resume does, once another holder took the lease', async () => {
    const key = await srv.agentKey('agents', 'run-3', 86_400);
    const a = await connect(key);
    const first = ok(await call(a.client, 'agent_resume', { lease_ttl_ms: 600_000 }));
    const released = await srv.call('POST', '/v1/lease/release', { key, body: { epoch: first.epoch } });
    assert.equal(released.status, 200, released.text);
    const other = await srv.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-b', ttl_ms: 600_000 } });
    assert.equal(other.status, 200, other.text);
    const http = await srv.call('POST', '/v1/resume', { key, body: { holder: 'pod-c' } });
    assert.deepEqual([http.status, http.body.error?.code], [409, 'lease_held']);
    const err = refused(await call(a.client, 'agent_resume', {}), 'lease_held');
    assert.match(err.message, /pod-b/);
    refused(await call(a.client, 'update_working_state', { goal: 'stale' }), 'lease_lost');
    await srv.call('POST', '/v1/lease/release', { key, body: { epoch: other.body.epoch } });
  });

  it('takes the lease again, with a new epoch, when the session lost it and it is free', async () => {
    const key = await srv.agentKey('agents', 'run-4', 86_400);
    const a = await connect(key);
    const first = ok(await call(a.client, 'agent_resume', { lease_ttl_ms: 600_000 }));
    await srv.call('POST', '/v1/lease/release', { key, body: { epoch: first.epoch } });
    const again = ok(await call(a.client, 'agent_resume', {}));
    assert.ok(again.epoch > first.epoch, 'not the dead epoch');
    assert.deepEqual([again.lease.held, again.lease.epoch], [true, again.epoch]);
    assert.equal(ok(await call(a.client, 'update_working_state', { goal: 'back' })).version, 1);
    await a.transport.terminateSession();
  });

  it("never answers another namespace's resume with the epoch the session holds", async () => {
    const a = await connect(srv.adminKey);
    const held = ok(await call(a.client, 'agent_resume', { namespace: 'agents:run-5' }));
    const err = refused(await call(a.client, 'agent_resume', { namespace: 'agents:run-6' }), 'invalid_request');
    assert.match(err.message, /^namespace: .*agents:run-5/);
    const read = ok(await call(a.client, 'agent_resume', { namespace: 'agents:run-6', defer: true }));
    assert.deepEqual([read.namespace, read.epoch], ['agents:run-6', null]);
    assert.equal(ok(await call(a.client, 'agent_resume', { namespace: 'agents:run-5' })).epoch, held.epoch);
    await a.transport.terminateSession();
  });

  it('answers an enum violation with an isError result naming the allowed values', async () => {
    const { client } = await connect(run1);
    const err = refused(await call(client, 'record_turn', { role: 'bot', content: 'x' }), 'invalid_request');
    assert.match(err.message, /^role: .*system.*user.*assistant.*tool/);
    const ptr = refused(await call(client, 'set_pointer', { name: 'p', type: 'url', fields: {} }), 'invalid_request');
    assert.match(ptr.message, /git_ref/);
  });

  it('keeps a key for agents:run-2 out of agents:run-1: arguments, resume, and its session id', async () => {
    const mine = await connect(run1);
    ok(await call(mine.client, 'remember', { subject: 'secret', predicate: 'note', value: 'run-1 only' }));
    const { client } = await connect(run2);
    refused(await call(client, 'recall', { namespace: 'agents:run-1', subject: 'secret' }), 'namespace_mismatch');
    refused(await call(client, 'agent_resume', { namespace: 'agents:run-1' }), 'namespace_mismatch');
    refused(await call(client, 'recent_turns', { namespace: 'agents:run-1' }), 'namespace_mismatch');
    assert.deepEqual(ok(await call(client, 'recall', { subject: 'secret' })).beliefs, []);
    const hijack = await srv.call('POST', '/mcp', {
      key: run2,
      headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': mine.transport.sessionId ?? '' },
      body: {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'recall', arguments: { subject: 'secret' } },
      },
    });
    assert.equal(hijack.status, 404);
  });
});
