/**
 * A demo agent for `tether up`: each request to `/` is a "turn". It proves who it is with the workload
 * token the platform mounted (TETHER_TOKEN_FILE), resumes under its agent's lease at its first turn
 * (the working state an earlier instance of the same session saved comes back), recalls and notes
 * turns, and records each turn and its working state under the lease. `/remember` stores a preference;
 * `/probe?namespace=` shows what the memory server answers when this agent reaches for another namespace.
 * Run by the gateway as `node --import tsx server.ts` with PORT, TETHER_URL and TETHER_TOKEN_FILE set.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { TetherError } from '../../src/common/errors.ts';
import type { AgentHandle } from '../../src/sdk/agent-handle.ts';
import { TetherClient } from '../../src/sdk/client.ts';

const { PORT = '8080', TETHER_URL, TETHER_TOKEN_FILE, TETHER_INSTANCE = 'local', LEASE_TTL_MS = '30000' } = process.env;
if (!TETHER_URL || !TETHER_TOKEN_FILE) {
  process.stderr.write('memory-agent needs TETHER_URL and TETHER_TOKEN_FILE (run it under `tether up`)\n');
  process.exit(1);
}
const ttlMs = Number(LEASE_TTL_MS);
// The key is fetched lazily: while this instance waits in the warm pool it has no key ("still in warm pool").
const memory = TetherClient.fromWorkloadToken({ url: TETHER_URL, tokenFile: TETHER_TOKEN_FILE });
let turns = 0;

type WorkingState = AgentHandle['resumed']['working_state'];
/** What this process found when it resumed: the working state an earlier instance saved. */
interface Resumed {
  epoch: number;
  fresh: boolean;
  working_state: Pick<WorkingState, 'version' | 'step' | 'progress' | 'focus'>;
}
/** The working-state fields this agent keeps (all of them are in the record). */
const brief = (s: WorkingState) => ({ version: s.version, step: s.step, progress: s.progress, focus: s.focus });
let leased: Promise<AgentHandle> | undefined;
let resumed: Resumed | undefined;

/**
 * The agent's lease, taken at the first turn (not at start: a warm-pool instance has no key yet).
 * An instance deleted for idleness releases it on SIGTERM; one killed outright leaves it to lapse,
 * so the next instance waits up to a TTL. A lost lease (paused past its TTL) is taken again.
 */
function lease(): Promise<AgentHandle> {
  leased ??= memory
    .resume({ holder: TETHER_INSTANCE, ttlMs, waitMs: ttlMs + 5000, pollMs: 250 })
    .then((agent) => {
      resumed ??= { epoch: agent.epoch, fresh: agent.resumed.fresh, working_state: brief(agent.resumed.working_state) };
      agent.on('lost', () => {
        leased = undefined;
      });
      return agent;
    })
    .catch((err: unknown) => {
      leased = undefined;
      throw err;
    });
  return leased;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

/** The memory server's refusal, as this agent saw it. */
function refusal(err: unknown): { status: number; code: string; message: string } {
  const e = err as TetherError;
  return { status: e.status, code: e.code, message: e.message };
}

/** One turn: recall the notes, note this turn, record it and the working state under the lease. */
async function turn(say: string): Promise<unknown> {
  const agent = await lease();
  const me = await memory.whoami();
  const { beliefs } = await memory.recall({ subject: 'conversation', predicate: 'note', limit: 1000 });
  turns++;
  const n = beliefs.length + 1;
  await memory.remember({
    subject: 'conversation',
    predicate: 'note',
    value: `turn ${n} served by ${TETHER_INSTANCE}`,
  });
  await agent.recordTurn({ role: 'user', content: say });
  const state = await agent.updateWorkingState({
    goal: 'keep the conversation going',
    step: n,
    progress: n === 1 ? '1 turn' : `${n} turns`,
    focus: say,
  });
  return {
    agent: me.agent,
    namespace: me.namespace,
    instance: TETHER_INSTANCE,
    pid: process.pid,
    turns_in_this_process: turns,
    remembered: beliefs.map((b) => b.value),
    epoch: agent.epoch,
    resumed,
    working_state: brief(state),
  };
}

/** Reaches for another agent's memory and resume context: both must be refused (403 namespace_mismatch). */
async function probe(namespace: string): Promise<unknown> {
  const recall = await memory
    .recall({ namespace, subject: 'user', predicate: 'prefers' })
    .then((r) => ({ status: 200, beliefs: r.beliefs.length }), refusal);
  const resume = await memory.resume({ namespace, ttlMs }).then(async (agent) => {
    await agent.release();
    return { status: 200, epoch: agent.epoch };
  }, refusal);
  return { namespace, recall, resume };
}

createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://agent');
  // The gateway's readiness and warm-up requests: no turn, no key (a warm-pool instance has none yet).
  if (req.headers['x-tether-probe'] !== undefined) return send(res, 200, { ready: true });
  try {
    if (url.pathname === '/') return send(res, 200, await turn(url.searchParams.get('say') ?? 'hello'));
    if (url.pathname === '/remember') {
      const value = url.searchParams.get('value') ?? 'dark mode';
      const r = await memory.remember({ subject: 'user', predicate: 'prefers', value });
      const { beliefs } = await memory.recall({ subject: 'user', predicate: 'prefers' });
      return send(res, 200, { stored: r.stored, already_known: r.already_known, prefers: beliefs.map((b) => b.value) });
    }
    if (url.pathname === '/probe') return send(res, 200, await probe(url.searchParams.get('namespace') ?? ''));
    send(res, 404, { error: { code: 'not_found', message: `no route ${url.pathname}` } });
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    send(res, e.status && e.status < 500 ? 502 : 503, { error: { code: e.code ?? 'unavailable', message: e.message } });
  }
}).listen(Number(PORT), '127.0.0.1');

// Deleted for idleness: give the lease back so the session's next instance resumes at once.
process.once('SIGTERM', () => {
  const done = () => process.exit(0);
  if (!leased) return done();
  leased.then((agent) => agent.release()).then(done, done);
});
