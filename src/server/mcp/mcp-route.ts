/**
 * @module
 * `POST /mcp`: the memory tools over MCP's Streamable HTTP transport, stateless (a new server and
 * transport per request, JSON responses, no sessions). Auth is the usual bearer key (`req.auth`);
 * tool failures are tool results with `isError` and the `{"error":{code,message}}` body, never a
 * stack trace. GET and DELETE answer 405. Registered by `app.ts`.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import { TetherError } from '../../common/errors.ts';
import { sendError, toTetherError } from '../error-handler.ts';
import { type MemoryTool, type MemoryToolDeps, memoryTools, toolInputJsonSchema } from './tools.ts';

/** Name and version the MCP server reports at `initialize`. */
export const MCP_SERVER_INFO = Object.freeze({ name: 'tether-memory', version: '0.1.0' });

const INSTRUCTIONS =
  'Tether memory: typed facts (subject, predicate, value) with full history that outlive your sandbox. ' +
  'Call list_predicates to see which predicates exist, remember to store a fact, recall to read current ' +
  'beliefs or search, forget to retract, memory_history for the events behind a fact.';

/** Dependencies of `mcpRoutes`. */
export type McpRoutesOptions = MemoryToolDeps;

/** Runs a tool and turns its answer or error into a tool result (errors are results, not protocol errors). */
export async function callTool(
  tool: MemoryTool,
  auth: AuthContext,
  args: unknown,
  log: FastifyBaseLogger,
): Promise<CallToolResult> {
  try {
    const answer = await tool.handler(auth, args);
    return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
  } catch (err) {
    const errorId = randomUUID();
    const te = toTetherError(err, errorId);
    if (te.code === 'internal') log.error({ err, errorId, tool: tool.name }, 'mcp tool failed');
    else log.info({ code: te.code, field: te.field, tool: tool.name }, 'mcp tool refused');
    const body = te.toBody();
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
  }
}

/**
 * `tools/call` as the protocol layer parses it: loose on purpose. The SDK's protocol layer turns a failed
 * parse of the schema given here into -32603 (internal error); the Server's own check of the full
 * `CallToolRequestSchema`, which runs next, answers a malformed call (`arguments` not an object, `name` not
 * a string) with -32602 (invalid params), as JSON-RPC means it.
 */
const LooseCallToolRequest = z.object({ method: z.literal('tools/call'), params: z.unknown() });

/** An MCP server for one request, acting as `auth`. */
function serverFor(tools: Map<string, MemoryTool>, listed: Tool[], auth: AuthContext, log: FastifyBaseLogger): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(LooseCallToolRequest, async (loose) => {
    // The Server has checked the request against CallToolRequestSchema before this runs.
    const request = loose as unknown as CallToolRequest;
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name.slice(0, 80)}'`);
    return callTool(tool, auth, request.params.arguments, log);
  });
  return server;
}

function methodNotAllowed(_req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('allow', 'POST');
  return sendError(
    reply,
    new TetherError('method_not_allowed', 'this MCP endpoint is stateless: use POST /mcp (no sessions, no SSE stream)'),
  );
}

/**
 * Registers `POST /mcp` (and 405 for GET and DELETE /mcp).
 * @example
 * await app.register(mcpRoutes, { engine, reader, registries });
 */
export async function mcpRoutes(app: FastifyInstance, opts: McpRoutesOptions): Promise<void> {
  const list = memoryTools(opts);
  const tools = new Map(list.map((t) => [t.name, t]));
  const listed: Tool[] = list.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: toolInputJsonSchema(t) as Tool['inputSchema'],
  }));

  const jsonRpc = { description: 'JSON-RPC 2.0 answer', content: { 'application/json': { schema: z.unknown() } } };
  const post = {
    summary: 'MCP (Streamable HTTP, stateless): the memory tools; the bearer key decides the namespace',
    body: z.unknown().describe('A JSON-RPC 2.0 request or notification (initialize, tools/list, tools/call)'),
    response: { 200: jsonRpc, 202: z.null().describe('Notification accepted') },
  };
  app.post('/mcp', { schema: post }, async function mcpPost(req, reply) {
    const server = serverFor(tools, listed, req.auth, req.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      const errorId = randomUUID();
      req.log.error({ err, errorId }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify(toTetherError(err, errorId).toBody()));
      } else {
        reply.raw.end();
      }
    }
  });
  const refused = { summary: 'Not served: this endpoint is stateless (405)', response: { 405: z.null() } };
  app.get('/mcp', { schema: refused }, methodNotAllowed);
  app.delete('/mcp', { schema: refused }, methodNotAllowed);
}
