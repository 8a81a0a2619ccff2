/**
 * @module
 * bench:resume — `POST /v1/resume` latency with 10,000 turns and 1,000 memories in the namespace, and
 * turn writes/s under a held lease, over HTTP like a real client (a keep-alive node:http client; the
 * server in a child process), side by side with the same rows read and written straight on the SQLite
 * store in this process (`lib/raw-resume.ts`, on a copy of the server's database).
 *
 * A resume is timed from request to the whole answer (lease taken, records read, briefing rendered at
 * the default 8,000-token budget); the lease is then released, untimed, for the next one. Turn writes go
 * to another namespace (so the resumed one stays at its size), 8 clients, `X-Lease-Epoch` on each.
 * Rounds interleave server and baseline; each figure is the median of the rounds.
 *
 * Environment:
 *   BENCH_ROUNDS=3  BENCH_TURNS=10000  BENCH_MEMORIES=1000  BENCH_RESUMES=200 (per round)
 *   BENCH_WRITE_MS=3000 (per round)  BENCH_CLIENTS=8
 *   BENCH_SERVER_NODE_ARGS=...   extra node flags for the server child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createProgress } from '../src/cli/progress.ts';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { LoopbackClient, runLoad } from './lib/http-load.ts';
import { type ChildServer, startChildServer } from './lib/memory-process.ts';
import { rawRelease, rawResume, rawTurn } from './lib/raw-resume.ts';
import { loadResumeNamespace } from './lib/resume-data.ts';
import { fmt, median, summarize, table } from './lib/stats.ts';
import { COMMON_WORDS } from './lib/words.ts';
import { findWrk, prepareWrkPost, type WrkPost } from './lib/wrk-post.ts';

const num = (name: string, fallback: number) =>
  Math.max(1, Math.round(Number(process.env[name] ?? fallback)) || fallback);
const ROUNDS = Math.min(9, num('BENCH_ROUNDS', 3));
const TURNS = num('BENCH_TURNS', 10_000);
const MEMORIES = num('BENCH_MEMORIES', 1_000);
const RESUMES = num('BENCH_RESUMES', 200);
const WRITE_MS = num('BENCH_WRITE_MS', 3_000);
const CLIENTS = num('BENCH_CLIENTS', 8);
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const TARGETS = { resumeP99: 50, turnWrites: 3_000 };
const RESUMED = 'bench:agent';
const WRITER = 'bench:writer';

/** Turn contents of 20-40 words (about 150-300 bytes), the same for server and baseline. */
const CONTENTS = Array.from({ length: 512 }, (_, i) =>
  Array.from({ length: 20 + (i % 21) }, (_, j) => COMMON_WORDS[(i * 31 + j * 7) % COMMON_WORDS.length]).join(' '),
);

interface Round {
  resumeP50: number;
  resumeP99: number;
  rawResumeP50: number;
  rawResumeP99: number;
  /** node:http driver (its ~70 us of client CPU a request shares the 2 cores with the server). */
  writes: number;
  /** wrk driver (NaN without wrk). */
  writesWrk: number;
  /** Server CPU per turn write under wrk, us (NaN without wrk). */
  cpuPerWrite: number;
  rawWrites: number;
}

async function mintKey(url: string, adminKey: string, namespace: string): Promise<string> {
  const [tenant, agent] = namespace.split(':');
  const client = new LoopbackClient(url, { headers: { authorization: `Bearer ${adminKey}` } });
  try {
    const r = await client.send({ method: 'POST', path: '/v1/keys', body: { tenant, agent, ttl_seconds: 86_400 } });
    if (r.status !== 201) throw new Error(`minting a key for ${namespace}: ${r.status} ${r.body}`);
    return (JSON.parse(r.body) as { key: string }).key;
  } finally {
    client.close();
  }
}

/** RESUMES resumes one after another over HTTP, each lease released (untimed) before the next. */
async function serverResumes(url: string, key: string): Promise<{ latencies: number[]; last: ResumeFacts }> {
  const client = new LoopbackClient(url, { sockets: 1, headers: { authorization: `Bearer ${key}` } });
  const latencies: number[] = [];
  let last: ResumeFacts | undefined;
  try {
    for (let i = -10; i < RESUMES; i++) {
      const t0 = performance.now();
      const r = await client.send({
        method: 'POST',
        path: '/v1/resume',
        body: { holder: 'bench', lease_ttl_ms: 60_000 },
      });
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`resume: ${r.status} ${r.body.slice(0, 300)}`);
      const body = JSON.parse(r.body) as ResumeFacts & { epoch: number };
      if (i >= 0) latencies.push(ms);
      last = { tokens: body.tokens, omitted: body.omitted, bytes: r.body.length, recent_turns: body.recent_turns };
      const rel = await client.send({ method: 'POST', path: '/v1/lease/release', body: { epoch: body.epoch } });
      if (rel.status !== 200) throw new Error(`release: ${rel.status} ${rel.body}`);
    }
  } finally {
    client.close();
  }
  return { latencies, last: last as ResumeFacts };
}

/** What one resume answered (shown once, as context for its latency). */
interface ResumeFacts {
  tokens: number;
  omitted: { turns: number; memories: number; outputs: number };
  bytes: number;
  recent_turns: unknown[];
}

async function rawResumes(store: SqliteStore): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = -10; i < RESUMES; i++) {
    const t0 = performance.now();
    const epoch = await rawResume(store, RESUMED, 'bench');
    const ms = performance.now() - t0;
    if (i >= 0) latencies.push(ms);
    await rawRelease(store, RESUMED, epoch);
  }
  return latencies;
}

/**
 * Turn writes/s over HTTP under one held lease, CLIENTS connections for WRITE_MS: with the node:http
 * driver, then with wrk when installed (and the server's CPU per write meanwhile).
 */
async function serverWrites(
  server: ChildServer,
  key: string,
  wrk: WrkPost | null,
  round: number,
): Promise<{ node: number; wrk: number; cpuPerWrite: number }> {
  const url = server.url;
  const auth = { authorization: `Bearer ${key}` };
  const client = new LoopbackClient(url, { headers: auth });
  const acquired = await client.send({ method: 'POST', path: '/v1/lease/acquire', body: { ttl_ms: 600_000 } });
  if (acquired.status !== 200) throw new Error(`acquire: ${acquired.status} ${acquired.body}`);
  const { epoch } = JSON.parse(acquired.body) as { epoch: number };
  try {
    const r = await runLoad({
      url,
      concurrency: CLIENTS,
      maxRequests: Number.MAX_SAFE_INTEGER,
      maxMs: WRITE_MS,
      warmup: 50,
      headers: { ...auth, 'x-lease-epoch': String(epoch) },
      request: (i) => ({
        method: 'POST',
        path: '/v1/turns',
        body: { role: 'assistant', content: CONTENTS[(i + 512) % 512] },
      }),
      check: (status, body) => (status === 201 ? undefined : `HTTP ${status}: ${body.slice(0, 200)}`),
    });
    if (r.errors > 0) throw new Error(`turn writes failed: ${r.errorSamples.join('; ')}`);
    if (!wrk) return { node: r.perSecond, wrk: Number.NaN, cpuPerWrite: Number.NaN };
    const cpu0 = server.cpuMicros();
    const seconds = Math.max(1, Math.round(WRITE_MS / 1000));
    const w = await wrk.run(url, key, `r${round}-`, CLIENTS, seconds, { 'X-Lease-Epoch': String(epoch) });
    const cpu = server.cpuMicros() - cpu0;
    if (w.failed > 0) throw new Error(`wrk: ${w.failed} turn writes failed`);
    return { node: r.perSecond, wrk: w.perSecond, cpuPerWrite: cpu / (w.perSecond * seconds) };
  } finally {
    await client.send({ method: 'POST', path: '/v1/lease/release', body: { epoch } });
    client.close();
  }
}

/** The same turn writes straight on the store, CLIENTS writes in flight for WRITE_MS. */
async function rawWrites(store: SqliteStore): Promise<number> {
  const got = await store.acquireLease({ namespace: WRITER, holder: 'raw', ttlMs: 600_000, now: Date.now() });
  if (!got.acquired) throw new Error('raw writes: lease held');
  const fence = { namespace: WRITER, epoch: got.lease.epoch };
  let n = 0;
  const start = performance.now();
  const end = start + WRITE_MS;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) await rawTurn(store, fence, CONTENTS[n++ % 512] as string);
    }),
  );
  const rate = (n / (performance.now() - start)) * 1000;
  await store.releaseLease({ ...fence, now: Date.now() });
  return rate;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tether-bench-resume-'));
  const serverDir = join(dir, 'server');
  const rawDir = join(dir, 'raw');
  let server: ChildServer | undefined;
  let raw: SqliteStore | undefined;
  try {
    console.log(
      `bench:resume  ${new Date().toISOString()}  node ${process.version}  ${cpus().length} cores  ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (a shared machine: other work runs too)`,
    );
    console.log(
      `${TURNS} turns and ${MEMORIES} memories in ${RESUMED}; ${RESUMES} resumes and ${WRITE_MS} ms of turn writes ` +
        `(${CLIENTS} clients) per round; ${ROUNDS} rounds, medians`,
    );
    server = await startChildServer(serverDir, SERVER_NODE_ARGS);
    const agentKey = await mintKey(server.url, server.adminKey, RESUMED);
    const writerKey = await mintKey(server.url, server.adminKey, WRITER);
    const progress = createProgress({ label: 'loading over HTTP', total: TURNS + MEMORIES, unit: 'records' });
    const t0 = performance.now();
    await loadResumeNamespace({
      url: server.url,
      key: agentKey,
      memories: MEMORIES,
      turns: TURNS,
      clients: CLIENTS,
      progress,
    });
    progress.done();
    console.log(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // The baseline reads a copy of the same database: stop (checkpoint), copy, start again on it.
    await server.stop();
    mkdirSync(rawDir);
    copyFileSync(join(serverDir, 'tether.db'), join(rawDir, 'tether.db'));
    server = await startChildServer(serverDir, SERVER_NODE_ARGS);
    raw = openSqliteStore({ dataDir: rawDir });
    const wrkPath = findWrk();
    const wrk = wrkPath
      ? await prepareWrkPost(wrkPath, dir, {
          name: 'turns',
          path: '/v1/turns',
          status: 201,
          expect: '"seq":',
          bodies: CONTENTS.map((c) => JSON.stringify({ role: 'assistant', content: `${c} @N@` })),
        })
      : null;
    if (!wrk) console.log('wrk is not installed: turn writes are driven by node:http only');

    const rounds: Round[] = [];
    let facts: ResumeFacts | undefined;
    for (let round = 1; round <= ROUNDS; round++) {
      const s = await serverResumes(server.url, agentKey);
      facts = s.last;
      const r = await rawResumes(raw);
      const writes = await serverWrites(server, writerKey, wrk, round);
      const rawW = await rawWrites(raw);
      const sr = summarize(s.latencies);
      const rr = summarize(r);
      rounds.push({
        resumeP50: sr.p50,
        resumeP99: sr.p99,
        rawResumeP50: rr.p50,
        rawResumeP99: rr.p99,
        writes: writes.node,
        writesWrk: writes.wrk,
        cpuPerWrite: writes.cpuPerWrite,
        rawWrites: rawW,
      });
      console.error(
        `round ${round}/${ROUNDS}: resume p50 ${fmt(sr.p50)} p99 ${fmt(sr.p99)} ms (raw ${fmt(rr.p50)} / ${fmt(rr.p99)}); ` +
          `turn writes ${fmt(writes.wrk)}/s wrk, ${fmt(writes.node)}/s node:http (raw ${fmt(rawW)}/s)`,
      );
    }
    const m = (k: keyof Round) => median(rounds.map((r) => r[k]));
    const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
    if (facts) {
      console.log(
        `\neach resume answered ${fmt(facts.bytes / 1024)} KiB: a briefing of ${facts.tokens} estimated tokens ` +
          `(budget 8000) with ${facts.recent_turns.length} recent turns; omitted ${facts.omitted.turns} turns, ` +
          `${facts.omitted.memories} memories, ${facts.omitted.outputs} outputs`,
      );
    }
    console.log(
      `\n${table([
        ['figure', 'server (HTTP)', 'raw store', 'ratio', 'target', ''],
        [
          'resume p50, ms',
          fmt(m('resumeP50')),
          fmt(m('rawResumeP50')),
          `${fmt(m('resumeP50') / m('rawResumeP50'))}x`,
          '',
          '',
        ],
        [
          'resume p99, ms',
          fmt(m('resumeP99')),
          fmt(m('rawResumeP99')),
          `${fmt(m('resumeP99') / m('rawResumeP99'))}x`,
          `<= ${TARGETS.resumeP99}`,
          met(m('resumeP99') <= TARGETS.resumeP99),
        ],
        [
          'turn writes/s, wrk (lease held)',
          fmt(m('writesWrk')),
          fmt(m('rawWrites')),
          `${fmt(m('writesWrk') / m('rawWrites'))}x`,
          `>= ${fmt(TARGETS.turnWrites)}`,
          met(m('writesWrk') >= TARGETS.turnWrites),
        ],
        [
          'turn writes/s, node:http client',
          fmt(m('writes')),
          fmt(m('rawWrites')),
          `${fmt(m('writes') / m('rawWrites'))}x`,
          '',
          '',
        ],
        ['server CPU per turn write, us', fmt(m('cpuPerWrite')), '', '', '', ''],
      ])}`,
    );
    console.log(
      `load average at the end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await server?.stop();
    await raw?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
