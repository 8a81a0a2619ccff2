/**
 * MCP sessions give their lease back however they end: idle for `idleMs` (manual clock, the sweep
 * called by hand), all at once on server shutdown (`closeAll`; over HTTP: the lease is free after a
 * restart on the same data), and a session without a lease releases nothing. Room for a new session
 * is made only among its owner's own: at its cap its longest idle closes; a full server refuses.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../../../src/auth/auth-context.ts';
import { ManualClock } from '../../../src/common/clock.ts';
import { type McpSession, McpSessions, type SessionLease } from '../../../src/server/mcp/sessions.ts';
import { startTestMemoryServer } from '../../helpers/memory-server.ts';

const RUN_1 = { tenant: 'agents', namespace: 'agents:run-1', keyId: 'k1' };

/** A session whose transport and server only count their closes (the sessions under test own nothing else). */
function session(
  id: string,
  lease: SessionLease | null,
  lastSeen: number,
  owner: McpSession['owner'] = RUN_1,
): McpSession & { closes: number } {
  const s = {
    id,
    lease,
    lastSeen,
    owner,
    closes: 0,
    transport: { close: async () => void s.closes++ },
    server: { close: async () => void s.closes++ },
  };
  return s as unknown as McpSession & { closes: number };
}

const lease = (epoch: number): SessionLease => ({ namespace: 'agents:run-1', epoch, ttlMs: 60_000, expiresAt: 0 });

describe('McpSessions', () => {
  it('closes a session idle for idleMs and releases its lease; a session used since stays open', async () => {
    const clock = new ManualClock();
    const released: SessionLease[] = [];
    const sessions = new McpSessions({ clock, idleMs: 10_000, release: async (l) => void released.push(l) });
    const idle = session('idle', lease(7), clock.now());
    const used = session('used', lease(8), clock.now());
    sessions.add(idle);
    sessions.add(used);
    clock.advance(9_999);
    const owner = { tenant: 'agents', namespace: 'agents:run-1', keyId: 'k1' } as AuthContext;
    assert.equal(sessions.find('used', owner), used, 'a request touches the session');
    await sessions.closeIdle();
    assert.deepEqual(released, [], 'nothing is idle for 10 s yet');
    clock.advance(1);
    await sessions.closeIdle();
    assert.deepEqual(released, [lease(7)]);
    assert.equal(idle.closes, 2, 'transport and server closed');
    assert.equal(sessions.size, 1);
    await sessions.closeAll();
  });

  it('releases every lease on closeAll (server shutdown), and nothing for a session that held none', async () => {
    const clock = new ManualClock();
    const released: SessionLease[] = [];
    const sessions = new McpSessions({ clock, release: async (l) => void released.push(l) });
    sessions.add(session('a', lease(3), clock.now()));
    sessions.add(session('b', null, clock.now()));
    sessions.add(session('c', lease(4), clock.now()));
    await sessions.closeAll();
    assert.deepEqual(released, [lease(3), lease(4)]);
    assert.equal(sessions.size, 0);
  });
});

describe('McpSessions.makeRoom()', () => {
  const other = { tenant: 'others', namespace: 'others:run-9', keyId: 'k9' };
  const as = (owner: McpSession['owner']) => owner as AuthContext;

  it("closes the owner's own longest idle session at its cap, never another owner's", async () => {
    const clock = new ManualClock();
    const released: SessionLease[] = [];
    const sessions = new McpSessions({ clock, maxSessionsPerOwner: 2, release: async (l) => void released.push(l) });
    const victim = session('victim', lease(1), clock.now() - 60_000, other); // idle longest of all
    sessions.add(victim);
    sessions.add(session('a', lease(2), clock.now() - 2));
    sessions.add(session('b', null, clock.now() - 1));
    await sessions.makeRoom(as(RUN_1));
    assert.deepEqual(released, [lease(2)], "run-1's own oldest went");
    assert.equal(victim.closes, 0);
    assert.equal(sessions.find('victim', as(other)), victim);
    assert.equal(sessions.size, 2);
    await sessions.closeAll();
  });

  it('refuses with 503 when the server is full and the owner below its cap, closing nobody', async () => {
    const clock = new ManualClock();
    const released: SessionLease[] = [];
    const sessions = new McpSessions({
      clock,
      maxSessions: 2,
      maxSessionsPerOwner: 2,
      release: async (l) => void released.push(l),
    });
    sessions.add(session('v1', lease(1), clock.now(), other));
    sessions.add(session('v2', lease(2), clock.now(), other));
    await assert.rejects(sessions.makeRoom(as(RUN_1)), (err: { code?: string; retryAfter?: number }) => {
      return err.code === 'unavailable' && (err.retryAfter ?? 0) > 0;
    });
    assert.deepEqual([released, sessions.size], [[], 2]);
    await sessions.makeRoom(as(other)); // at its own cap: its own oldest makes room
    assert.deepEqual(released, [lease(1)]);
    await sessions.closeAll();
  });
});

describe('POST /mcp initialize when one agent opens many sessions', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  };
  const headers = (sid?: string) => ({
    accept: 'application/json, text/event-stream',
    ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}),
  });

  it("closes that agent's own oldest session past its cap of 100, and leaves other tenants' sessions and leases", async () => {
    const srv = await startTestMemoryServer();
    const victim = new Client({ name: 'tether-sessions-test', version: '0.0.0' });
    try {
      const victimKey = await srv.agentKey('victims', 'run-1');
      await victim.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', srv.url), {
          requestInit: { headers: { Authorization: `Bearer ${victimKey}` } },
        }),
      );
      const resumed = (await victim.callTool({ name: 'agent_resume', arguments: {} })) as CallToolResult;
      assert.notEqual(resumed.isError, true, JSON.stringify(resumed.structuredContent));
      const key = await srv.agentKey('crowd', 'run-1');
      const opened: string[] = [];
      for (let i = 0; i <= 100; i++) {
        const r = await srv.call('POST', '/mcp', { key, body: initialize, headers: headers() });
        assert.equal(r.status, 200, r.text);
        opened.push(r.headers.get('mcp-session-id') ?? '');
      }
      const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
      const first = await srv.call('POST', '/mcp', { key, body: list, headers: headers(opened[0]) });
      assert.equal(first.status, 404, 'the crowd agent lost its own oldest session');
      const second = await srv.call('POST', '/mcp', { key, body: list, headers: headers(opened[1]) });
      assert.equal(second.status, 200);
      assert.ok((await victim.listTools()).tools.length > 0, "the other tenant's session is open");
      assert.equal((await srv.call('GET', '/v1/lease', { key: victimKey })).body.held, true);
    } finally {
      await victim.close();
      await srv.close();
    }
  });
});

describe('POST /mcp: a server shutdown releases the leases its sessions held', () => {
  it('leaves the lease free for the next holder after a restart on the same data', async () => {
    const clock = new ManualClock();
    const first = await startTestMemoryServer({ clock });
    const key = await first.agentKey('agents', 'run-1', 86_400);
    const client = new Client({ name: 'tether-sessions-test', version: '0.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', first.url), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    });
    await client.connect(transport);
    const r = (await client.callTool({ name: 'agent_resume', arguments: {} })) as CallToolResult;
    assert.notEqual(r.isError, true, JSON.stringify(r.structuredContent));
    const epoch = (r.structuredContent as { epoch: number }).epoch;
    assert.equal((await first.call('GET', '/v1/lease', { key })).body.held, true);
    await first.close(true);
    await client.close();

    // The clock has not moved: without the release the lease would still be live for 60 s.
    const second = await startTestMemoryServer({ clock, dataDir: first.dataDir, adminKey: first.adminKey });
    try {
      const lease = await second.call('GET', '/v1/lease', { key });
      assert.deepEqual([lease.body.held, lease.body.epoch], [false, epoch]);
      const again = await second.call('POST', '/v1/lease/acquire', { key, body: { holder: 'pod-b' } });
      assert.equal(again.status, 200, again.text);
      assert.ok(again.body.epoch > epoch);
    } finally {
      await second.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
