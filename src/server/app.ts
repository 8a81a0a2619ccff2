/**
 * @module
 * Builds the memory server (Fastify) from explicit dependencies: store, key service, engine, clock,
 * logger. No globals, so tests can build many. The CLI listens on it; tests use `inject()` or listen.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { AuthContext } from '../auth/auth-context.ts';
import type { KeyService } from '../auth/key-service.ts';
import type { Clock } from '../common/clock.ts';
import { TetherError, unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import { MemoryEngine } from '../memory/engine.ts';
import { MemoryReader } from '../memory/recall.ts';
import { RegistryBook } from '../memory/registry-book.ts';
import { CheckpointRecords } from '../memory/resume/checkpoints.ts';
import { Leases } from '../memory/resume/leases.ts';
import { ResumeRecords } from '../memory/resume/records.ts';
import { Resumer } from '../memory/resume/resume.ts';
import type { PredicateDef } from '../store/registry-store.ts';
import type { Store } from '../store/store.ts';
import { authPlugin } from './auth-plugin.ts';
import { BodyBudget, installBodyBudget } from './body-budget.ts';
import { checkpointCalls } from './calls/checkpoint-calls.ts';
import { type MemoryCalls, memoryCalls } from './calls/memory-calls.ts';
import { resumeCalls } from './calls/resume-calls.ts';
import { clientErrorHandler, installErrorHandlers, sendError } from './error-handler.ts';
import { installLightLane } from './light-lane.ts';
import { LoopWatch } from './loop-watch.ts';
import { mcpRoutes } from './mcp/mcp-route.ts';
import { createMemoryMetrics, type MemoryMetrics } from './metrics.ts';
import { registerOpenApi } from './openapi.ts';
import { installQueryRules } from './query-rules.ts';
import { installKeyRateLimit, RequestLimits, type RequestLimitsOptions } from './rate-limits.ts';
import { checkpointRoutes } from './routes/checkpoints.ts';
import { consoleRoutes } from './routes/console.ts';
import { eventRoutes } from './routes/events.ts';
import { keyRoutes } from './routes/keys.ts';
import { leaseRoutes } from './routes/lease.ts';
import { memoryRoutes } from './routes/memories.ts';
import { opsRoutes } from './routes/ops.ts';
import { registryRoutes } from './routes/registry.ts';
import { resumeRecordRoutes } from './routes/resume-records.ts';
import { installWellFormedCheck } from './well-formed.ts';
import { jsonSerializerCompiler, zodValidatorCompiler } from './zod-routes.ts';

/** The API version OpenAPI and MCP report. */
export const API_VERSION = '0.1.0';

/** Largest request body, bytes. */
export const BODY_LIMIT = 1024 * 1024;

/** Default time a client has to send a whole request (head and body), ms. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Dependencies of the memory server. */
export interface MemoryServerOptions {
  store: Store;
  keys: KeyService;
  clock: Clock;
  log: Logger;
  /** Registry a new tenant starts with. */
  defaultRegistry: readonly PredicateDef[];
  /** Extra route plugins (e.g. workload identity), registered after auth. */
  plugins?: ((app: FastifyInstance, deps: { metrics: MemoryMetrics }) => Promise<void>)[];
  /** Replaces key verification (benchmarks measure its cost against this). @default keys.verify */
  verify?: (key: string) => Promise<AuthContext>;
  /** Add process metrics to /metrics. @default false */
  processMetrics?: boolean;
  /** The gateway admin URL the web console reaches through this server (`tether up`). @default none: memory only */
  consoleGateway?: () => string | undefined;
  /** Request and purge rate limits (see `rate-limits.ts`). @default 100 requests/s per key, 6 purges/min */
  limits?: Omit<RequestLimitsOptions, 'clock'>;
  /** Request body bytes in work at once (`body-budget.ts`). @default 512 KiB */
  maxBodyBytesInWork?: number;
  /**
   * Time a client has to send a whole request (head and body), ms; past it 408 and the connection
   * closes (freeing its room in the body budget). 0 = no limit. @default 30000
   */
  requestTimeoutMs?: number;
  /** Most events one `as_of` read folds (`recall.ts`). @default 20000 */
  maxScanEvents?: number;
  /** Turn content above this many estimated tokens is stored as an output. @default 2000 */
  turnTokenLimit?: number;
  /** Import bodies of this many characters or more are parsed on a worker thread (`import-off-loop.ts`). @default 64 Ki */
  importOffLoopBytes?: number;
  /** Bearer token /metrics requires; with it /metrics also shows the event counts. @default none (public, no event counts) */
  metricsToken?: string;
  /** A request in flight while the event loop was held longer than this is named in a warning, ms. @default 100 */
  loopHoldWarnMs?: number;
}

/** A built memory server and the parts tests may want. */
export interface MemoryServer {
  app: FastifyInstance;
  engine: MemoryEngine;
  reader: MemoryReader;
  registries: RegistryBook;
  metrics: MemoryMetrics;
  records: ResumeRecords;
  leases: Leases;
  /** The memory calls the routes and MCP tools share. */
  calls: MemoryCalls;
  /** Every route as registered (HEAD routes Fastify adds for GET left out), in order. */
  routes: readonly RegisteredRoute[];
  /** Request body bytes in work and requests waiting for room. */
  bodyBudget: BodyBudget;
  /** The lane of routes whose body waits alone (the import): one such request at a time, beside `bodyBudget`. */
  aloneBodies: BodyBudget;
  /** The event-loop lag sampler (stopped when the app closes). */
  loopWatch: LoopWatch;
}

/** A registered route: what OpenAPI is generated from (checked against it by test/server/openapi.test.ts). */
export interface RegisteredRoute {
  method: string;
  url: string;
  schema: Record<string, unknown> | undefined;
  public: boolean;
}

/** Builds (does not listen) the memory server. */
export async function createMemoryServer(options: MemoryServerOptions): Promise<MemoryServer> {
  const { store, keys, clock } = options;
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  if (!Number.isInteger(requestTimeoutMs) || requestTimeoutMs < 0) {
    throw new Error(
      `Cannot build the memory server as 'requestTimeoutMs' must be a whole number ≥ 0: got ${requestTimeoutMs}`,
    );
  }
  const app = Fastify({
    loggerInstance: options.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    // A client that stops sending mid-body would hold its room in the body budget (and so every
    // other tenant's writes) for ever; past this Node answers 408 (`clientErrorHandler`) and closes.
    requestTimeout: requestTimeoutMs,
    http: {
      // Node takes the larger of the two as the request timeout (it swaps them), and its headers
      // timeout stays at 60 s when Fastify sets `requestTimeout` after construction: keep it ≤.
      headersTimeout: requestTimeoutMs > 0 ? Math.min(60_000, requestTimeoutMs) : 60_000,
      // Node looks for expired requests every `connectionsCheckingInterval` (default 30 s, which could
      // double the timeout); once a second walks only the connections still sending a request.
      connectionsCheckingInterval: requestTimeoutMs > 0 ? Math.min(1000, requestTimeoutMs) : 30_000,
    },
    // One line per request costs throughput; errors and refusals are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Our own 503 (below) has the wire error shape and a Retry-After; Fastify's has neither.
    return503OnClosing: false,
    frameworkErrors: function frameworkError(err, _req, reply) {
      const bad = err.code === 'FST_ERR_BAD_URL' ? 'url: is not a valid URL' : `request: ${err.message}`;
      return sendError(
        reply,
        new TetherError('invalid_request', bad, { field: err.code === 'FST_ERR_BAD_URL' ? 'url' : 'request' }),
      );
    },
    forceCloseConnections: 'idle',
    clientErrorHandler,
  });
  // First of all hooks: a request is light (it goes before heavy work) until it spends a time slice.
  installLightLane(app);
  const registries = new RegistryBook(store, clock, options.defaultRegistry);
  const engine = new MemoryEngine({ store, registries, clock });
  const reader = new MemoryReader({ store, registries, clock, maxScanEvents: options.maxScanEvents });
  // Resume writes go straight to the store (fenced), never through the fact writer's batching queue.
  const records = new ResumeRecords({ store, clock, turnTokenLimit: options.turnTokenLimit });
  const leases = new Leases({ store, clock });
  const resumer = new Resumer({ records, leases, reader });
  const resume = resumeCalls({ records, leases, resumer, clock });
  const metrics = createMemoryMetrics({
    store,
    keys,
    writes: engine.writeStats,
    collectDefaults: options.processMetrics,
    storeFigures: options.metricsToken !== undefined,
  });

  // What other replicas changed (PostgreSQL: LISTEN/NOTIFY) reaches this replica's caches.
  const unsubscribe = store.subscribe?.((change) => {
    metrics.storeChanges.inc({ kind: change.kind });
    if (change.kind === 'key_revoked') keys.forget(change.id);
    else if (change.kind === 'registry') registries.invalidate(change.tenant);
    else if (change.kind === 'resync') {
      keys.flush();
      registries.flush();
      metrics.cacheFlushes.inc();
    }
  });
  app.addHook('onClose', async () => unsubscribe?.());
  const loopWatch = new LoopWatch({
    histogram: metrics.loopDelay,
    log: options.log,
    thresholdMs: options.loopHoldWarnMs,
  });
  loopWatch.start();
  app.addHook('onClose', async () => loopWatch.stop());

  const calls = memoryCalls({ engine, reader, registries, onAppend: (n) => metrics.eventsAppended.inc(n) });

  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    // Hidden routes (the web console's files) are not part of the API: not in OpenAPI, not listed here.
    if ((route.schema as { hide?: boolean } | undefined)?.hide) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const config = route.config as { public?: boolean } | undefined;
      routes.push({
        method,
        url: route.url,
        schema: route.schema as RegisteredRoute['schema'],
        public: !!config?.public,
      });
    }
  });
  installQueryRules(app);
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(jsonSerializerCompiler);
  await registerOpenApi(app, API_VERSION);
  installErrorHandlers(app);
  installWellFormedCheck(app);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // While closing, every answer (also of requests already in flight) closes its connection, so
  // keep-alive clients let go and close() finishes as soon as the in-flight requests have.
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  const spans = new WeakMap<object, ReturnType<LoopWatch['begin']>>();
  // One hook for both (each hook is a promise and a turn of Fastify's hook runner per request).
  app.addHook('onRequest', async (req) => {
    if (closing) throw unavailable('server is shutting down', 1);
    spans.set(req, loopWatch.begin(req.method, req.routeOptions.url ?? 'unknown'));
  });
  const ended = (req: object) => {
    const span = spans.get(req);
    if (span) loopWatch.end(span);
    spans.delete(req);
  };
  app.addHook('onRequestAbort', async (req) => ended(req));
  app.addHook('onResponse', async (req, reply) => {
    ended(req);
    metrics.requestDuration.observe(
      { method: req.method, route: req.routeOptions.url ?? 'unknown', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  await app.register(authPlugin, { keys, verify: options.verify });
  const limits = new RequestLimits({ ...options.limits, clock });
  installKeyRateLimit(app, limits);
  const bodyBudget = new BodyBudget({ maxBytes: options.maxBodyBytesInWork });
  // Half the request timeout at most in the queue: the other half is the client's, to send its body.
  const aloneBodies = new BodyBudget({ maxBytes: 1 });
  installBodyBudget(app, bodyBudget, BODY_LIMIT, Math.floor(requestTimeoutMs / 2), aloneBodies);
  await app.register(opsRoutes, { store, metrics, metricsToken: options.metricsToken });
  await app.register(keyRoutes, { keys, store, clock });
  await app.register(memoryRoutes, { calls });
  await app.register(registryRoutes, { calls });
  await app.register(eventRoutes, {
    store,
    engine,
    registries,
    clock,
    limits,
    turnTokenLimit: options.turnTokenLimit,
    importOffLoopBytes: options.importOffLoopBytes,
  });
  await app.register(resumeRecordRoutes, { calls: resume });
  await app.register(checkpointRoutes, { calls: checkpointCalls(new CheckpointRecords({ store, clock })) });
  await app.register(leaseRoutes, { calls: resume });
  await app.register(mcpRoutes, { calls, resume, leases, clock });
  await app.register(consoleRoutes, { gatewayAdminUrl: options.consoleGateway });
  for (const plugin of options.plugins ?? []) await app.register(async (scope) => plugin(scope, { metrics }));
  return {
    app,
    engine,
    reader,
    registries,
    metrics,
    records,
    leases,
    calls,
    routes,
    bodyBudget,
    aloneBodies,
    loopWatch,
  };
}
