/**
 * A LangGraph agent as a sandbox service for `tether up`: each request to `/` runs the next step of
 * the session's pipeline (`pipeline.ts`, thread `job`) and checkpoints it in the memory server through
 * `TetherCheckpointSaver`, under the agent's lease. When this instance is deleted mid-run, the
 * session's next instance (same agent, same namespace) finds the last checkpoint and goes on from
 * there. Run by the gateway as `node --import tsx server.ts` with PORT, TETHER_URL, TETHER_TOKEN_FILE.
 */
import { createServer, type ServerResponse } from 'node:http';
import { TetherCheckpointSaver } from '../../src/langgraph/checkpoint-saver.ts';
import { advance, pipeline } from './pipeline.ts';

const { PORT = '8080', TETHER_URL, TETHER_TOKEN_FILE, TETHER_INSTANCE = 'local', LEASE_TTL_MS = '30000' } = process.env;
if (!TETHER_URL || !TETHER_TOKEN_FILE) {
  process.stderr.write('the langgraph example needs TETHER_URL and TETHER_TOKEN_FILE (run it under `tether up`)\n');
  process.exit(1);
}
const ttlMs = Number(LEASE_TTL_MS);
// The key comes from the workload token at the first request (a warm-pool instance has none yet); the
// lease is taken at the first checkpoint write, waiting out one a killed instance left to lapse.
const checkpointer = new TetherCheckpointSaver({
  url: TETHER_URL,
  tokenFile: TETHER_TOKEN_FILE,
  holder: TETHER_INSTANCE,
  ttlMs,
  waitMs: ttlMs + 5000,
  pollMs: 250,
});
const graph = pipeline(checkpointer, TETHER_INSTANCE);

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://agent');
  // The gateway's readiness and warm-up requests: no step, no key.
  if (req.headers['x-tether-probe'] !== undefined) return send(res, 200, { ready: true });
  if (url.pathname !== '/')
    return send(res, 404, { error: { code: 'not_found', message: `no route ${url.pathname}` } });
  try {
    const progress = await advance(graph, 'job', url.searchParams.get('task') ?? 'write the weekly report');
    const { namespace } = await checkpointer.client.whoami();
    send(res, 200, { instance: TETHER_INSTANCE, namespace, ...progress });
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    send(res, 503, { error: { code: e.code ?? 'unavailable', message: e.message } });
  }
}).listen(Number(PORT), '127.0.0.1');

// Deleted for idleness: give the lease back so the session's next instance goes on at once.
process.once('SIGTERM', () => {
  const done = () => process.exit(0);
  checkpointer.close().then(done, done);
});
