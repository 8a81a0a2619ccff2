/**
 * The Vercel AI SDK's MCP client (`@ai-sdk/mcp`, Streamable HTTP) against `/mcp` of a real memory
 * server, configured as docs/sdk.md shows: it lists the 15 tools, and the tools it returns are called
 * as an agent's model would call them (no model here: the test invokes each tool's `execute`):
 * `remember`, then `recall` finds the fact, and `agent_resume` takes the lease and answers the briefing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMCPClient } from '@ai-sdk/mcp';
import { startTestMemoryServer, type TestMemoryServer } from '../../helpers/memory-server.ts';

/** What a tool's `execute` answers: MCP's CallToolResult. */
interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, any>;
}

describe('Vercel AI SDK MCP client -> /mcp', () => {
  let server: TestMemoryServer;
  let mcp: Awaited<ReturnType<typeof createMCPClient>>;
  before(async () => {
    server = await startTestMemoryServer();
    const key = await server.agentKey('acme', 'ai-sdk-agent');
    mcp = await createMCPClient({
      transport: { type: 'http', url: new URL('/mcp', server.url).href, headers: { Authorization: `Bearer ${key}` } },
    });
  });
  after(async () => {
    await mcp?.close();
    await server.close();
  });

  it('lists the 15 tools and runs remember, recall and agent_resume through the tools it returns', async () => {
    const tools = await mcp.tools();
    assert.deepEqual(Object.keys(tools).sort(), [
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
    const run = async (name: string, args: Record<string, unknown>) => {
      const tool = tools[name] as unknown as { execute?: (a: unknown, o: unknown) => Promise<unknown> };
      assert.ok(tool.execute, `${name} is executable`);
      const r = (await tool.execute(args, { toolCallId: `call-${name}`, messages: [] })) as ToolResult;
      assert.notEqual(r.isError, true, JSON.stringify(r.content));
      return JSON.parse(r.content[0]?.text ?? 'null');
    };

    const remembered = await run('remember', { subject: 'user', predicate: 'prefers', value: 'dark mode' });
    assert.equal(remembered.already_known, false, JSON.stringify(remembered));
    const recalled = await run('recall', { subject: 'user' });
    assert.deepEqual(
      recalled.beliefs.map((b: { predicate: string; value: unknown }) => [b.predicate, b.value]),
      [['prefers', 'dark mode']],
    );
    const resumed = await run('agent_resume', {});
    assert.equal(resumed.namespace, 'acme:ai-sdk-agent');
    assert.equal(typeof resumed.epoch, 'number');
    assert.equal(resumed.lease.held, true);
    assert.match(resumed.briefing, /^# Resume briefing for acme:ai-sdk-agent\nLease: held, epoch \d+/);
  });
});
