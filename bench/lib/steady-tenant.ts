/**
 * @module
 * Tenant B of bench:fairness, in its own process (so the bench's own work for tenant A never delays
 * B's clock): one request every `rateMs`, cycling recall (one fact), remember (a new value of
 * `note`) and whoami, each timed from its send. Usage:
 * `node --import tsx bench/lib/steady-tenant.ts <url> <key> <rateMs>`; answers `inflight` on stdin with
 * `inflight <n>` (its requests not answered yet); runs until stdin says `stop` (or closes), then prints one JSON line: every sample `[sentAtEpochMs, latencyMs, kind, status]`
 * and the values it remembered.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [url, key, rateText] = process.argv.slice(2);
if (!url || !key) {
  process.stderr.write('usage: steady-tenant.ts <url> <key> <rateMs>\n');
  process.exit(2);
}
const rateMs = Number(rateText ?? 20);
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const base = new URL(url);

/** One request; resolves with its status once the whole answer was read. */
function call(method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${key}`, ...(data ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const samples: [number, number, string, number][] = [];
const remembered: string[] = [];
let stopping = false;
let n = 0;
const inFlight = new Set<Promise<void>>();

function fire(): void {
  const kind = (['recall', 'remember', 'whoami'] as const)[n % 3] as string;
  const i = n++;
  const sentAt = Date.now();
  const t0 = performance.now();
  let sent: Promise<number>;
  if (kind === 'recall') sent = call('GET', '/v1/memories?subject=b-proj&predicate=note&limit=10');
  else if (kind === 'remember') {
    const value = `b-note-${i}`;
    remembered.push(value);
    sent = call('POST', '/v1/memories', { subject: 'b-proj', predicate: 'note', value });
  } else sent = call('GET', '/v1/whoami');
  const p = sent
    .then(
      (status) => {
        samples.push([sentAt, performance.now() - t0, kind, status]);
      },
      () => {
        samples.push([sentAt, performance.now() - t0, kind, 0]);
      },
    )
    .finally(() => inFlight.delete(p));
  inFlight.add(p);
}

// Open loop at a fixed rate: a slow answer does not delay the next send (that is what is measured).
const start = performance.now();
const timer = setInterval(
  () => {
    if (stopping) return;
    const due = Math.floor((performance.now() - start) / rateMs);
    // A tick the process itself missed is sent now, once, not in a burst.
    if (due >= n) fire();
  },
  Math.max(1, Math.floor(rateMs / 4)),
);

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  await Promise.all([...inFlight]);
  agent.destroy();
  // A pipe's write is asynchronous: exit once it is flushed, or the line is cut.
  process.stdout.write(`${JSON.stringify({ samples, remembered })}\n`, () => process.exit(0));
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  const text = String(d);
  if (text.includes('stop')) void stop();
  // The bench asks between rows: B's requests not answered yet (its backlog).
  else if (text.includes('inflight')) process.stdout.write(`inflight ${inFlight.size}\n`);
});
process.stdin.on('end', () => void stop());
call('POST', '/v1/memories', { subject: 'b-proj', predicate: 'note', value: 'steady' }).then(
  () => process.stdout.write('ready\n'),
  (err) => {
    process.stderr.write(`steady-tenant: ${String(err)}\n`);
    process.exit(1);
  },
);
