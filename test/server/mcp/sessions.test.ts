/**
 * MCP sessions give their lease back however they end: idle for `idleMs` (manual clock, the sweep
 * called by hand), all at once on server shutdown (`closeAll`; over HTTP: the lease is free after a
 * restart on the same data), and a session without a lease releases nothing.
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

/** A session whose transport and server only count their closes (the sessions under test own nothing else). */
function session(id: string, lease: SessionLease | null, lastSeen: number): McpSession & { closes: number } {
  const s = {
    id,
    lease,
    lastSeen,
    owner: { tenant: 'agents', namespace: 'agents:run-1', keyId: 'k1' },
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
    await sessions.add(idle);
    await sessions.add(used);
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
    await sessions.add(session('a', lease(3), clock.now()));
    await sessions.add(session('b', null, clock.now()));
    await sessions.add(session('c', lease(4), clock.now()));
    await sessions.closeAll();
    assert.deepEqual(released, [lease(3), lease(4)]);
    assert.equal(sessions.size, 0);
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
