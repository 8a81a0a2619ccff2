/**
 * @module
 * `POST /mcp`: the memory and resume tools over MCP's Streamable HTTP transport. An `initialize` opens a
 * session (`Mcp-Session-Id`, JSON responses; `sessions.ts`), which holds the lease `agent_resume` takes
 * and releases it on `DELETE /mcp`; a request without a session id is served statelessly (a server and
 * transport for that request). Auth is the usual bearer key on every request; the key decides the
 * namespace. Tool failures are tool results with `isError` and the `{"error":{code,message}}` body,
 * never a stack trace. GET answers 405 (no server-initiated stream). Registered by `app.ts`.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  type CallToolRequest,
  type CallToolResult,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import type { Clock } from '../../common/clock.ts';
import { TetherError, toTetherError } from '../../common/errors.ts';
import type { Leases } from '../../memory/resume/leases.ts';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import { sendError } from '../error-handler.ts';
import { resumeTools } from './resume-tools.ts';
import { type McpSession, type McpSessionContext, McpSessions } from './sessions.ts';
import { type MemoryTool, type MemoryToolDeps, memoryTools, toolInputJsonSchema } from './tools.ts';

/** Name and version the MCP server reports at `initialize`. */
export const MCP_SERVER_INFO = Object.freeze({ name: 'tether-memory', version: '0.1.0' });

const INSTRUCTIONS =
  'Tether memory: typed facts (subject, predicate, value) with full history that outlive your sandbox. ' +
  'Call list_predicates to see which predicates exist, remember to store a fact, recall to read current ' +
  'beliefs or search, forget to retract, memory_history for the events behind a fact. To continue work ' +
  'after your sandbox was replaced, call agent_resume first: it holds the lease for this session and ' +
  'returns your working state and a briefing; then save progress with update_working_state, ' +
  'agent_milestone, record_turn, store_output and set_pointer.';

/** Dependencies of `mcpRoutes`. */
export interface McpRoutesOptions extends MemoryToolDeps {
  resume: ResumeCalls;
  /** Releases a session's lease when the session closes. */
  leases: Leases;
  clock: Clock;
  /** Close an MCP session after this long without a request, ms. @default 1800000 */
  sessionIdleMs?: number;
}

/** Runs a tool and turns its answer or error into a tool result (errors are results, not protocol errors). */
export async function callTool(
  tool: MemoryTool,
  auth: AuthContext,
  args: unknown,
  log: FastifyBaseLogger,
  session: McpSessionContext | null = null,
): Promise<CallToolResult> {
  try {
    const answer = await tool.handler(auth, args, session);
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

/** The caller of one MCP request: its key, and its session when it has one. */
interface Caller {
  auth: AuthContext;
  session: McpSessionContext | null;
}

/** The key of the request being handled, as `handleRequest` passes it (the SDK's `authInfo`). */
const AUTH_KEY = 'tether';

/**
 * An MCP server. `caller` gives the auth and session of each request: fixed for a stateless request,
 * read from the request's `authInfo` for a session (each request is authenticated afresh).
 */
function serverFor(
  tools: Map<string, MemoryTool>,
  listed: Tool[],
  caller: (authInfo: unknown) => Caller,
  log: FastifyBaseLogger,
): Server {
  const server = new Server(MCP_SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(LooseCallToolRequest, async (loose, extra) => {
    // The Server has checked the request against CallToolRequestSchema before this runs.
    const request = loose as unknown as CallToolRequest;
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool '${request.params.name.slice(0, 80)}'`);
    const { auth, session } = caller(extra.authInfo);
    return callTool(tool, auth, request.params.arguments, log, session);
  });
  return server;
}

/** The request's auth as the SDK carries it to the handlers (never the key itself). */
function withAuth(req: FastifyRequest): FastifyRequest['raw'] & {
  auth: { token: string; clientId: string; scopes: string[]; extra: Record<string, unknown> };
} {
  const raw = req.raw as FastifyRequest['raw'] & { auth?: unknown };
  raw.auth = { token: '', clientId: req.auth.keyId, scopes: [], extra: { [AUTH_KEY]: req.auth } };
  return raw as ReturnType<typeof withAuth>;
}

function methodNotAllowed(_req: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('allow', 'POST');
  return sendError(
    reply,
    new TetherError(
      'method_not_allowed',
      'use POST /mcp (no server-initiated stream); DELETE /mcp needs the Mcp-Session-Id of a session to close',
    ),
  );
}

/** Runs `handle` on the raw response, answering an unexpected failure with a 500 JSON body (logged). */
async function hijacked(req: FastifyRequest, reply: FastifyReply, handle: () => Promise<void>): Promise<void> {
  reply.hijack();
  try {
    await handle();
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
}

/** 404 for a session id that is not (or no longer, or not the caller's) an open session, as JSON-RPC. */
function sessionNotFound(reply: FastifyReply): FastifyReply {
  return reply
    .status(404)
    .type('application/json')
    .send({
      jsonrpc: '2.0',
      error: { code: -32001, message: 'Session not found: initialize a new MCP session' },
      id: null,
    });
}

/**
 * Registers `POST /mcp` (and 405 for GET and DELETE /mcp).
 * @example
 * await app.register(mcpRoutes, { engine, reader, registries });
 */
export async function mcpRoutes(app: FastifyInstance, opts: McpRoutesOptions): Promise<void> {
  const list = [...memoryTools(opts), ...resumeTools({ calls: opts.resume, clock: opts.clock })];
  const tools = new Map(list.map((t) => [t.name, t]));
  const listed: Tool[] = list.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: toolInputJsonSchema(t) as Tool['inputSchema'],
  }));
  const sessions = new McpSessions({
    clock: opts.clock,
    idleMs: opts.sessionIdleMs,
    release: async (lease) => {
      const admin = {
        keyId: 'mcp-session',
        tenant: '*',
        agent: null,
        session: null,
        admin: true,
        namespace: null,
        expiresAt: null,
      };
      await opts.resume
        .release(admin, { namespace: lease.namespace, epoch: lease.epoch })
        .catch((err: unknown) => app.log.info({ code: (err as TetherError).code }, 'mcp session lease not released'));
    },
  });
  app.addHook('onClose', async () => sessions.closeAll());

  /** A new session for `req`, which is an initialize; recorded once the transport has its id. */
  async function openSession(req: FastifyRequest): Promise<StreamableHTTPServerTransport> {
    let session: McpSession | undefined;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: async (id) => {
        session = {
          id,
          lease: null,
          transport,
          server,
          owner: { tenant: req.auth.tenant, namespace: req.auth.namespace, keyId: req.auth.keyId },
          lastSeen: opts.clock.now(),
        };
        sessions.add(session);
      },
      onsessionclosed: (id) => sessions.closed(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) void sessions.closed(transport.sessionId);
    };
    const server = serverFor(
      tools,
      listed,
      (authInfo) => ({
        auth:
          ((authInfo as { extra?: Record<string, unknown> } | undefined)?.extra?.[AUTH_KEY] as AuthContext) ?? req.auth,
        session: session ?? null,
      }),
      req.log,
    );
    await server.connect(transport);
    return transport;
  }

  const jsonRpc = { description: 'JSON-RPC 2.0 answer', content: { 'application/json': { schema: z.unknown() } } };
  const post = {
    summary:
      'MCP (Streamable HTTP; initialize opens a session): memory and resume tools; the key decides the namespace',
    body: z.unknown().describe('A JSON-RPC 2.0 request or notification (initialize, tools/list, tools/call)'),
    response: { 200: jsonRpc, 202: z.null().describe('Notification accepted') },
  };
  app.post('/mcp', { schema: post }, async function mcpPost(req, reply) {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') {
      const session = sessions.find(sid, req.auth);
      if (!session) return sessionNotFound(reply);
      return hijacked(req, reply, () => session.transport.handleRequest(withAuth(req), reply.raw, req.body));
    }
    if (isInitializeRequest(req.body)) {
      await sessions.makeRoom(req.auth); // refused (503) before the transport answers
      return hijacked(req, reply, async () =>
        (await openSession(req)).handleRequest(withAuth(req), reply.raw, req.body),
      );
    }
    // No session: this request alone, on a server and transport of its own.
    const server = serverFor(tools, listed, () => ({ auth: req.auth, session: null }), req.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
    return hijacked(req, reply, async () => {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    });
  });
  const refused = { summary: 'Not served: no server-initiated stream (405)', response: { 405: z.null() } };
  app.get('/mcp', { schema: refused }, methodNotAllowed);
  const closeSession = {
    summary: 'Close an MCP session (Mcp-Session-Id); its lease is released',
    response: { 200: z.null().describe('Closed'), 404: z.null().describe('No such session'), 405: z.null() },
  };
  app.delete('/mcp', { schema: closeSession }, async function mcpDelete(req, reply) {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid !== 'string') return methodNotAllowed(req, reply);
    const session = sessions.find(sid, req.auth);
    if (!session) return sessionNotFound(reply);
    return hijacked(req, reply, () => session.transport.handleRequest(withAuth(req), reply.raw, req.body));
  });
}
