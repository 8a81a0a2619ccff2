/**
 * @module
 * bench:fairness — a noisy neighbour. One memory server (SQLite, in a child process); tenant B (its
 * own process, `lib/steady-tenant.ts`) sends recall, remember and whoami at a fixed rate and its
 * latency is reported first alone, then while tenant A sends, one kind at a time, the heaviest request
 * each route allows: 16 batches of 500 new `note` values into one fact (sent again, into a new fact
 * of a second namespace, until B has run `--min-window-ms` beside it); one more batch and a
 * back-dated statement; the fact's whole history (pages of 1,000); ten as_of searches at once; a
 * search with limit 1,000; a resume with token_budget 200,000; a 1 MiB import; a purge. Each row:
 * B's p50/p99/max, its p99 as a ratio to the quiet p99, and the target (p99 <= 2x quiet, max <=
 * 150 ms). Then every value A and B wrote is looked for in the export. `uptime` load is printed.
 * All of it runs `--runs` times, each on a new server, and the target is judged on the medians over
 * the runs (`lib/fairness-report.ts`: a row holds 3-300 of B's samples, so one run's p99 is nearly its
 * maximum, and one scheduling hiccup of a 2-core machine would decide it).
 * Loopback only; bounded loops; the temp folder is removed.
 *
 * Flags: --runs 3, --rate-ms 20 (B's interval), --quiet-ms 5000 (B alone), --min-window-ms 2000 (a row's
 * repeatable request is sent again until B has run this long beside it, at most 20 times), --a-nice 0
 * (the OS nice value of this process's main thread, tenant A's client, set once the server and B
 * run: on a machine of 2 cores A parsing its own multi-MB answers competes with the server and B for
 * the CPU, which in a deployment it would not, being another machine; printed when not 0), --samples
 * FILE (writes, to FILE.<run>.json, the rows' windows and every sample of B, `[sentAt, ms, kind,
 * status]`: which of B's requests waited, and when), --cpu-prof DIR (the server runs with
 * `--cpu-prof` into DIR; read a profile with `lib/cpuprofile-summary.ts`), --node-flags "F…" (more node
 * flags for the server child, after the servers' own, so a V8 flag given here wins: e.g.
 * `--heap-growing-percent=50`; printed in the table's header), --a-apart (a control, not the target:
 * A's requests go to a second server process of their own, so nothing of A runs in B's server and what
 * B still waits for is the machine's 2 cores), --a-server-nice N (with --a-apart: that server's threads
 * at nice N, as a heavy writer's thread of lower priority would be), --loop-trace (B's server records its
 * event loop's gaps and GC pauses, `lib/loop-trace-hook.mjs`; each run then prints, per row, the gaps of 6 ms
 * or more and how much of them the loop ran or waited for a core, the full GCs and scavenges, how many of
 * B's slow requests were in flight across one, and who ran on the cores (`lib/cpu-by-thread.ts`); the last
 * table pools the runs: a diagnostic, its 1 ms timer costs the server a little CPU).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { newEventId } from '../src/common/ids.ts';
import { type CpuShare, type CpuSnapshot, cpuBetween, cpuSnapshot } from './lib/cpu-by-thread.ts';
import { mediansTable, type RowFigures, rowFigures, runTable } from './lib/fairness-report.ts';
import { cpuTable, loopRows, loopTable, poolLoopRows, type RowLoop, readLoopTrace } from './lib/loop-trace.ts';
import { type ChildServer, startChildServer } from './lib/memory-process.ts';

const { values: flags } = parseArgs({
  options: {
    'rate-ms': { type: 'string', default: '20' },
    'quiet-ms': { type: 'string', default: '5000' },
    'min-window-ms': { type: 'string', default: '2000' },
    'a-nice': { type: 'string', default: '0' },
    runs: { type: 'string', default: '3' },
    samples: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'node-flags': { type: 'string' },
    'a-apart': { type: 'boolean', default: false },
    'a-server-nice': { type: 'string', default: '0' },
    'loop-trace': { type: 'boolean', default: false },
  },
});
const A_NICE = Number(flags['a-nice']);
if (!Number.isInteger(A_NICE) || A_NICE < 0 || A_NICE > 19) {
  throw new Error(`--a-nice must be a whole number from 0 to 19: got ${flags['a-nice']}`);
}
const A_APART = flags['a-apart'] === true;
const A_SERVER_NICE = Number(flags['a-server-nice']);
if (!Number.isInteger(A_SERVER_NICE) || A_SERVER_NICE < 0 || A_SERVER_NICE > 19) {
  throw new Error(`--a-server-nice must be a whole number from 0 to 19: got ${flags['a-server-nice']}`);
}
if (A_SERVER_NICE > 0 && !A_APART) throw new Error('--a-server-nice needs --a-apart (B shares the one server)');
const RUNS = Number(flags.runs);
if (!Number.isInteger(RUNS) || RUNS < 1 || RUNS > 20)
  throw new Error(`--runs must be a whole number from 1 to 20: got ${flags.runs}`);
const EXTRA_NODE_FLAGS = flags['node-flags']?.split(' ').filter(Boolean) ?? [];
const LOOP_TRACE = flags['loop-trace'] === true;
const LOOP_TRACE_HOOK = new URL('./lib/loop-trace-hook.mjs', import.meta.url).href;
const RATE_MS = Number(flags['rate-ms']);
const QUIET_MS = Number(flags['quiet-ms']);
const MIN_WINDOW_MS = Number(flags['min-window-ms']);
for (const [name, v] of [
  ['rate-ms', RATE_MS],
  ['quiet-ms', QUIET_MS],
  ['min-window-ms', MIN_WINDOW_MS],
] as const) {
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number of ms: got ${v}`);
}
const load = () =>
  execFileSync('uptime', { encoding: 'utf8' })
    .trim()
    .replace(/^.*load average:\s*/, 'load ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One run on a server of its own: B alone, then beside each of A's rows; prints the run's table.
 * @returns B's figures per row, and how many written values the exports missed
 */
async function oneRun(run: number): Promise<{ figures: RowFigures[]; lost: number; loop: RowLoop[] | null }> {
  // The server and B inherit this process's nice value: back to 0 before they start (root may).
  if (A_NICE > 0) setPriority(0);
  const startLoad = load();
  const dir = mkdtempSync(join(tmpdir(), 'tether-fairness-'));
  // Beside the data folder, not in it; the hook reads where from its environment (B's server only).
  const traceFile = LOOP_TRACE ? `${dir}.loop.ndjson` : null;
  if (traceFile) process.env.TETHER_LOOP_TRACE_FILE = traceFile;
  const server = await startChildServer(dir, [
    ...(flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${flags['cpu-prof']}`, '--cpu-prof-interval=250'] : []),
    ...(traceFile ? ['--import', LOOP_TRACE_HOOK] : []),
    ...EXTRA_NODE_FLAGS,
  ]);
  delete process.env.TETHER_LOOP_TRACE_FILE;
  const dirA = A_APART ? mkdtempSync(join(tmpdir(), 'tether-fairness-a-')) : dir;
  let serverA = server;
  let tenantB: ChildProcess | undefined;
  try {
    if (A_APART) serverA = await startChildServer(dirA, EXTRA_NODE_FLAGS);
    // Every thread it has now; those it starts later inherit the nice value of the thread starting them.
    if (A_SERVER_NICE > 0)
      for (const t of readdirSync(`/proc/${serverA.pid}/task`)) setPriority(Number(t), A_SERVER_NICE);
    const on =
      (srv: ChildServer) =>
      async (method: string, path: string, key: string, body?: unknown, type = 'application/json') => {
        const res = await fetch(new URL(path, srv.url), {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': type }) },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
        return text;
      };
    // A's requests (and the admin's import and purge, which A's rows send) go to A's server, B's to B's.
    const api = on(serverA);
    const apiB = on(server);
    const mintOn = async (srv: ChildServer, tenant: string, agent: string) =>
      JSON.parse(await on(srv)('POST', '/v1/keys', srv.adminKey, { tenant, agent, ttl_seconds: 3600 })).key as string;
    const mint = (tenant: string, agent: string) => mintOn(serverA, tenant, agent);
    const keyA = await mint('tenant-a', 'run-1');
    const keyB = await mintOn(server, 'tenant-b', 'run-1');
    // The batches row's later passes: a namespace of their own, so the rows after it see the one big fact.
    const keyA2 = await mint('tenant-a', 'run-2');
    const admin = serverA.adminKey;

    // Tenant A's work, row by row; `repeat` rows are sent again until B has a window of samples.
    const written: string[] = [];
    let batch = 0;
    const writtenMore: string[] = [];
    const noteBatch = async (into = { key: keyA, subject: 'proj', values: written, word: 'alpha' }) => {
      const statements = Array.from({ length: 500 }, (_, i) => {
        const value = `${into.word} note ${batch} ${i}`;
        into.values.push(value);
        return { subject: into.subject, predicate: 'note', value };
      });
      batch++;
      await api('POST', '/v1/memories', into.key, { statements });
    };
    let passes = 0;
    const epoch = JSON.parse(await api('POST', '/v1/lease/acquire', keyA, { ttl_ms: 3_600_000 })).epoch as number;
    await fetch(new URL('/v1/working-state', serverA.url), {
      method: 'PATCH',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json', 'x-lease-epoch': String(epoch) },
      body: JSON.stringify({ goal: 'fairness', focus: 'alpha note' }),
    });
    let imports = 0;
    const importBody = async () => {
      // 1 MiB of event lines (A's own shape, from its export), new ids, into a namespace of its own.
      const lines = (await api('GET', '/v1/events?namespace=tenant-a:run-1', keyA))
        .split('\n')
        .filter((l) => l.includes('"subject"'));
      const out: string[] = [];
      let bytes = 0;
      imports++;
      for (const l of lines) {
        const e = JSON.parse(l);
        const line = JSON.stringify({
          ...e,
          id: newEventId(),
          namespace: `tenant-a:import-${imports}`,
          value: `${e.value} i${imports}`,
          value_key: `${e.value} i${imports}`.toLowerCase(),
        });
        if (bytes + line.length + 1 > 1024 * 1024 - 16) break;
        out.push(line);
        bytes += line.length + 1;
      }
      return out.join('\n');
    };
    const rows: { name: string; repeat: boolean; run: () => Promise<unknown> }[] = [
      {
        name: '16 batches of 500 into one note fact',
        // Sent again (into a new fact of run-2) until B has its window: one pass takes ~0.5 s, in which B
        // has ~25 samples, and the p99 of 25 samples is their maximum.
        repeat: true,
        run: async () => {
          const pass = passes++;
          const into =
            pass === 0 ? undefined : { key: keyA2, subject: `more-${pass}`, values: writtenMore, word: 'beta' };
          for (let i = 0; i < 16; i++) await noteBatch(into);
        },
      },
      {
        name: 'one more batch + a back-dated statement',
        repeat: false,
        run: async () => {
          await noteBatch();
          written.push('alpha back-dated');
          await api('POST', '/v1/memories', keyA, {
            subject: 'proj',
            predicate: 'note',
            value: 'alpha back-dated',
            observed_at: Date.now() - 86_400_000,
          });
        },
      },
      {
        name: 'GET history of that fact (every page of 1,000)',
        repeat: true,
        run: async () => {
          let cursor = '';
          for (let page = 0; page < 100; page++) {
            const r = JSON.parse(
              await api('GET', `/v1/memories/history?subject=proj&predicate=note&limit=1000${cursor}`, keyA),
            );
            if (!r.next) return;
            cursor = `&cursor=${encodeURIComponent(r.next)}`;
          }
        },
      },
      {
        name: 'ten as_of searches at once',
        repeat: true,
        run: () =>
          Promise.all(
            Array.from({ length: 10 }, () => api('GET', `/v1/memories?q=alpha&as_of=${Date.now()}&limit=1000`, keyA)),
          ),
      },
      {
        name: 'a search with limit 1,000',
        repeat: true,
        run: () => api('GET', '/v1/memories?q=alpha+note&limit=1000', keyA),
      },
      {
        name: 'a resume with token_budget 200,000',
        repeat: true,
        run: () => api('POST', '/v1/resume', keyA, { token_budget: 200_000, defer: true }),
      },
      {
        name: 'a 1 MiB import',
        repeat: true,
        run: async () => api('POST', '/v1/events/import', admin, await importBody(), 'application/x-ndjson'),
      },
      {
        name: 'a purge of a namespace of 8,501 events',
        repeat: false,
        run: () => api('DELETE', '/v1/namespaces/tenant-a:run-1', admin),
      },
    ];

    /**
     * Waits (at most 120 s) until B's backlog is gone (no more than 2 of its requests unanswered, three
     * times in a row) and a small remember of A answers within 50 ms: the writer's queue is free again.
     */
    let inflight: ((n: number) => void) | null = null;
    const askInflight = () =>
      new Promise<number>((resolve) => {
        inflight = resolve;
        tenantB?.stdin?.write('inflight\n');
      });
    const settled = async () => {
      for (let calm = 0, tries = 0; calm < 3 && tries < 1200; tries++) {
        const t0 = performance.now();
        await api('POST', '/v1/memories', keyA, { subject: 'settle', predicate: 'note', value: `s${tries % 4}` });
        const fast = performance.now() - t0 < 50;
        calm = fast && (await askInflight()) <= 2 ? calm + 1 : 0;
        await sleep(100);
      }
    };

    // Tenant B starts, runs alone, then beside each row.
    tenantB = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('./lib/steady-tenant.ts', import.meta.url)),
        server.url,
        keyB,
        String(RATE_MS),
      ],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const out = createInterface({ input: tenantB.stdout! });
    const lines: string[] = [];
    const readyOrResult = new Promise<void>((resolve) =>
      out.on('line', (l) => {
        if (l === 'ready') resolve();
        else if (l.startsWith('inflight ')) inflight?.(Number(l.slice(9)));
        else lines.push(l);
      }),
    );
    await readyOrResult;
    // After the server and B started (children inherit a nice value): only A's client runs at it.
    if (A_NICE > 0) setPriority(A_NICE);
    const windows: { name: string; from: number; to: number; ms: number; sent: number }[] = [];
    // With the loop trace: who ran on the cores during each window (B's server by thread, A's and B's clients).
    const cpu: CpuShare[] = [];
    const snapshot = () => (traceFile ? cpuSnapshot(server.pid, process.pid, tenantB?.pid ?? -1) : null);
    const cpuSince = (before: CpuSnapshot | null) => {
      const after = snapshot();
      if (before && after) cpu.push(cpuBetween(before, after));
    };
    const quietFrom = Date.now();
    const quietCpu = snapshot();
    await sleep(QUIET_MS);
    windows.push({ name: 'quiet (B alone)', from: quietFrom, to: Date.now(), ms: 0, sent: 0 });
    cpuSince(quietCpu);
    // The values of the export check are taken before the purge erases A's namespace.
    let exportedA = '';
    for (const row of rows) {
      if (row.name.startsWith('a purge')) exportedA = await api('GET', '/v1/events?namespace=tenant-a:run-1', keyA);
      await settled(); // B's backlog of the row before is answered first
      const from = Date.now();
      const rowCpu = snapshot();
      let sent = 0;
      let busy = 0;
      do {
        const t0 = performance.now();
        await row.run();
        busy += performance.now() - t0;
        sent++;
      } while (row.repeat && sent < 20 && Date.now() - from < MIN_WINDOW_MS);
      windows.push({ name: row.name, from, to: Date.now(), ms: busy / sent, sent });
      cpuSince(rowCpu);
    }
    const finished = new Promise<void>((resolve) => tenantB!.on('exit', () => resolve()));
    tenantB.stdin!.end('stop\n');
    await finished;
    const result = JSON.parse(lines[lines.length - 1] as string) as {
      samples: [number, number, string, number][];
      remembered: string[];
    };

    if (flags.samples)
      writeFileSync(`${flags.samples}.${run}.json`, JSON.stringify({ windows, samples: result.samples }));
    const figures = rowFigures(windows, result.samples);
    console.log(`run ${run}: tenant B every ${RATE_MS} ms (recall, remember, whoami), SQLite, ${startLoad}`);
    console.log(runTable(figures));

    // Nothing lost: every value A wrote is in its export (taken before the purge), every B value in B's.
    const exportedB = await apiB('GET', '/v1/events?namespace=tenant-b:run-1', keyB);
    const valuesOf = (ndjson: string) =>
      new Set(
        ndjson
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l).value),
      );
    const a = valuesOf(exportedA);
    const b = valuesOf(exportedB);
    const more = valuesOf(await api('GET', '/v1/events?namespace=tenant-a:run-2', keyA2));
    const lostA = [...written.filter((v) => !a.has(v)), ...writtenMore.filter((v) => !more.has(v))];
    const lostB = result.remembered.filter((v) => !b.has(v));
    console.log(
      `nothing lost: A ${written.length + writtenMore.length - lostA.length}/${written.length + writtenMore.length} values in the export, B ${result.remembered.length - lostB.length}/${result.remembered.length}${lostA.length + lostB.length ? '  LOST SOME' : ''}`,
    );
    console.log(`(ms; B's latency from send to the whole answer; ${load()})\n`);
    let loop: RowLoop[] | null = null;
    if (traceFile) {
      await server.stop(); // the hook writes its last lines as the server exits
      loop = loopRows(windows, result.samples, readLoopTrace(traceFile), 2 * (figures[0]?.p99 ?? 0), cpu);
      console.log(`the server's event loop, run ${run} (gaps and GC pauses, ms; B slow: over twice the quiet p99)`);
      console.log(`${loopTable(loop)}\n`);
      console.log(`who ran on the cores, run ${run} (ms of run time; 2 cores give twice the row's length)`);
      console.log(`${cpuTable(loop)}\n`);
    }
    return { figures, lost: lostA.length + lostB.length, loop };
  } finally {
    tenantB?.kill();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    if (traceFile) rmSync(traceFile, { force: true });
    if (serverA !== server) await serverA.stop();
    if (dirA !== dir) rmSync(dirA, { recursive: true, force: true });
  }
}

const runs: RowFigures[][] = [];
const loops: RowLoop[][] = [];
let lost = 0;
for (let run = 1; run <= RUNS; run++) {
  const r = await oneRun(run);
  runs.push(r.figures);
  if (r.loop) loops.push(r.loop);
  lost += r.lost;
}
if (A_NICE > 0) {
  console.log(
    `tenant A's client (this process) ran at nice ${A_NICE}: on one machine its parsing of the big answers competes with the server and B for the CPU, as in a deployment it would not`,
  );
}
if (A_APART) {
  console.log(
    `a control, not the target: tenant A was served by a server process of its own${A_SERVER_NICE > 0 ? ` at nice ${A_SERVER_NICE}` : ''}, B's server served only B`,
  );
}
if (EXTRA_NODE_FLAGS.length > 0) console.log(`the server ran with these node flags too: ${EXTRA_NODE_FLAGS.join(' ')}`);
console.log(`bench:fairness — medians over ${RUNS} run(s), each on a new server; ${load()}`);
console.log(mediansTable(runs));
if (loops.length > 0) {
  console.log(`\nthe server's event loop over the ${loops.length} run(s), added up (ms; longest: of any run)`);
  const pooled = poolLoopRows(loops);
  console.log(loopTable(pooled));
  console.log(`\nwho ran on the cores over the ${loops.length} run(s), added up (ms of run time)`);
  console.log(cpuTable(pooled));
}
console.log(lost > 0 ? `LOST ${lost} written values` : 'nothing lost in any run');
