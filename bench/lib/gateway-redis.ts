/**
 * @module
 * `npm run bench:gateway -- --session-store redis`: Redis session mode against memory mode, side by side in one
 * run on one machine (a redis-server started here on a free port, data in a temp folder): proxy throughput and
 * p50/p99 (wrk, interleaved rounds, medians), new session from the warm pool to first byte (p50/p99), and the
 * time from start to serving again with 1,000 recorded sessions (in-process restart: the first gateway detaches
 * its instances, the second adopts them; then the same as a `tether gateway` process, Node start included).
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pickSessionStore } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { type Gateway, startGateway } from '../../src/gateway/gateway.ts';
import { killRecorded } from '../../test/gateway/redis/helpers.ts';
import { startRedis } from '../../test/helpers/redis.ts';
import { spawnTether } from '../../test/helpers/tether-cli.ts';
import {
  benchGatewayOptions,
  firstByte,
  fmt,
  instances,
  type Load,
  load,
  pct,
  service,
  until,
} from './gateway-load.ts';
import { which } from './which.ts';

const CONNECTIONS = 16;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const RECORDED = 1000;

/** One line of the summary: what, memory, redis, decimals, target, met (undefined: no target). */
type Row = [string, number | null, number, number, string, boolean | undefined];

/** The summary table: both modes side by side, the ratio, the target and whether it was met. */
function printTable(rows: Row[]): void {
  console.log(
    `\nsummary (${new Date().toISOString()}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')})`,
  );
  console.log(
    `  ${'figure'.padEnd(36)} ${'memory'.padStart(10)} ${'redis'.padStart(10)} ${'ratio'.padStart(7)}  target`,
  );
  for (const [what, mem, red, digits, target, met] of rows) {
    const ratio = mem === null || mem === 0 ? '' : `${fmt(red / mem)}x`;
    const verdict = met === undefined ? '' : met ? ' (met)' : ' (NOT met)';
    console.log(
      `  ${what.padEnd(36)} ${(mem === null ? 'n/a' : fmt(mem, digits)).padStart(10)} ${fmt(red, digits).padStart(10)} ${ratio.padStart(7)}  ${target}${verdict}`,
    );
  }
}

/**
 * Spawns `bin/tether gateway <args>` and times spawn to the first answer of the old session `m7`.
 * @returns the milliseconds, once its instance (same pid) answered, and where they went
 */
async function processRestart(
  args: string[],
  pid: number,
  cleanups: Array<() => Promise<void>>,
): Promise<{ ms: number; detail: string }> {
  const t0 = performance.now();
  const child = spawnTether(['gateway', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGTERM');
    await once(child, 'exit');
  });
  let out = '';
  let firstLineMs: number | undefined;
  child.stdout?.on('data', (c) => {
    firstLineMs ??= performance.now() - t0;
    out += c;
  });
  const listening = () => out.split('\n').find((l) => l.includes('"gateway listening"'));
  await until('tether gateway listening', async () => listening() !== undefined, 30_000);
  const { publicUrl } = JSON.parse(listening() as string) as { publicUrl: string };
  const again = await firstByte(`${publicUrl}/`, { host: 'many.default.example.com', cookie: 's=m7' });
  const ms = performance.now() - t0;
  if (again.status !== 200 || again.pid !== pid)
    throw new Error('process restart: the session did not reach its process');
  const read = out.split('\n').find((l) => l.includes('"session store read"'));
  const { ms: readMs, restored } = JSON.parse(read ?? '{}') as { ms?: number; restored?: number };
  const detail = `of which: Node + tsx start and module loading to its first log line ${fmt(firstLineMs ?? Number.NaN, 0)} ms; store read + adopt ${readMs ?? '?'} ms (${restored ?? '?'} sessions restored)`;
  return { ms, detail };
}

/** Runs the comparison and prints it. */
export async function compareRedis(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const dir = await mkdtemp(join(tmpdir(), 'tether-bench-redis-'));
  try {
    const redis = await startRedis({ after: (fn) => cleanups.push(fn) });
    const file = join(dir, 'services.yaml');
    await writeFile(
      file,
      [
        service('bench', { 'serving.knative.dev/session-timeout': '30m' }),
        service('warm', { 'serving.knative.dev/warm-pool': '3', 'serving.knative.dev/session-timeout': '100ms' }),
        service('many', {
          'autoscaling.knative.dev/metric': 'session',
          'autoscaling.knative.dev/target': '250',
          'serving.knative.dev/session-timeout': '1h',
        }),
      ].join('---\n'),
    );
    const redisStore = (prefix: string) =>
      pickSessionStore({ sessionStore: 'redis', redisUrl: redis.url, redisPrefix: prefix }, silentLogger());
    const memStateDir = join(dir, 'state-memory');
    const redisStateDir = join(dir, 'state-redis');
    const memory = await startGateway(benchGatewayOptions(file, { stateDir: memStateDir }));
    const first = await startGateway({
      ...benchGatewayOptions(file, { stateDir: redisStateDir, sessionStore: redisStore('bench:') }),
      gatewayId: 'bench-redis',
    });
    let redisGw: Gateway | undefined = first;
    cleanups.push(() => memory.close());
    cleanups.push(async () => {
      await redisGw?.close();
      await killRecorded(redisStateDir);
    });
    const wrk = which('wrk', ['/usr/bin/wrk']);
    console.log(
      `tether gateway bench: Redis session mode vs memory mode — load by ${wrk ? 'wrk' : 'node:http driver'}, ${CONNECTIONS} connections`,
    );
    console.log(
      `  ${new Date().toISOString()}, load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    const headers = { Host: 'bench.default.example.com', Cookie: 's=bench' };
    const gws: Array<[string, Gateway]> = [
      ['memory', memory],
      ['redis', first],
    ];
    for (const [, g] of gws) await load(wrk, `${g.publicUrl}/`, headers, CONNECTIONS, 1); // warm-up
    const runs = new Map<string, Load[]>(gws.map(([n]) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [n, g] of gws) runs.get(n)?.push(await load(wrk, `${g.publicUrl}/`, headers, CONNECTIONS));
    }
    const med = new Map<string, Load>();
    for (const [n, list] of runs) {
      list.sort((a, b) => a.rps - b.rps);
      med.set(n, list[Math.floor((list.length - 1) / 2)] as Load);
    }
    console.log(`\nthroughput, ${CONNECTIONS} connections, one session (median of ${ROUNDS} interleaved rounds)`);
    console.log('  store      req/s      p50 ms   p99 ms');
    for (const [n, l] of med) {
      console.log(
        `  ${n.padEnd(8)} ${fmt(l.rps, 0).padStart(8)}   ${fmt(l.p50, 3).padStart(7)}  ${fmt(l.p99, 3).padStart(7)}`,
      );
    }
    const m = med.get('memory') as Load;
    const r = med.get('redis') as Load;
    console.log(`  redis/memory throughput: ${fmt(r.rps / m.rps)}x`);

    // New session from the warm pool, alternating the two gateways.
    const warm = new Map<string, number[]>(gws.map(([n]) => [n, []]));
    for (let i = 0; i < SAMPLES; i++) {
      for (const [n, g] of gws) {
        await until('warm pool full', async () => {
          const list = (await instances(g)).filter((x) => x.service === 'warm');
          return list.length === 3 && list.every((x) => x.warm && x.state === 'paused');
        });
        const res = await firstByte(`${g.publicUrl}/`, { host: 'warm.default.example.com', cookie: `s=w${n}${i}` });
        if (res.status !== 200) throw new Error(`warm claim answered ${res.status}`);
        warm.get(n)?.push(res.ms);
      }
    }
    console.log(`\nnew session from the warm pool to first byte (${SAMPLES} samples each)`);
    for (const [n, list] of warm) {
      list.sort((a, b) => a - b);
      console.log(`  ${n.padEnd(8)} p50 ${fmt(pct(list, 50), 3)} ms  p99 ${fmt(pct(list, 99), 3)} ms`);
    }

    // Restart to serving with 1,000 recorded sessions.
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: RECORDED }, (_, i) =>
        firstByte(`${first.publicUrl}/`, { host: 'many.default.example.com', cookie: `s=m${i}` }),
      ),
    );
    const bindMs = performance.now() - t0;
    const pidBefore = (await firstByte(`${redisGw.publicUrl}/`, { host: 'many.default.example.com', cookie: 's=m7' }))
      .pid;
    await redisGw.close(); // detaches: the instances stay for the next gateway
    redisGw = undefined;
    const t1 = performance.now();
    const second = await startGateway({
      ...benchGatewayOptions(file, { stateDir: redisStateDir, sessionStore: redisStore('bench:') }),
      gatewayId: 'bench-redis',
    });
    redisGw = second;
    const again = await firstByte(`${second.publicUrl}/`, { host: 'many.default.example.com', cookie: 's=m7' });
    const restartMs = performance.now() - t1;
    if (again.status !== 200 || again.pid !== pidBefore)
      throw new Error('restart: the session did not reach its process');
    console.log(`\nrestart to serving with ${RECORDED} recorded sessions (4 instances, bound in ${fmt(bindMs, 0)} ms)`);
    console.log(`  in-process start + adopt + first request of an old session: ${fmt(restartMs, 1)} ms (same pid)`);
    await second.close();
    redisGw = undefined;
    const { ms: processMs, detail } = await processRestart(
      [
        ...['--services', file, '--port', '0', '--admin-port', '0', '--host', '127.0.0.1', '--data', join(dir, 'data')],
        ...['--state-dir', redisStateDir, '--session-store', 'redis', '--redis-url', redis.url],
        ...['--redis-prefix', 'bench:', '--gateway-id', 'bench-redis', '--new-sessions-per-minute', '0'],
        ...['--log-format', 'json'],
      ],
      pidBefore,
      cleanups,
    );
    console.log(
      `  a \`tether gateway\` process, spawn to that first request answered: ${fmt(processMs, 1)} ms (same pid)`,
    );
    console.log(`    ${detail}`);
    const w = warm.get('redis') as number[];
    const wm = warm.get('memory') as number[];
    const rows: Row[] = [
      ['throughput, req/s', m.rps, r.rps, 0, '>= 0.9x memory', r.rps / m.rps >= 0.9],
      ['proxy p50, ms', m.p50, r.p50, 3, '', undefined],
      ['proxy p99, ms', m.p99, r.p99, 3, '', undefined],
      ['warm new session p50, ms', pct(wm, 50), pct(w, 50), 3, '', undefined],
      ['warm new session p99, ms', pct(wm, 99), pct(w, 99), 3, '<= 50 ms (redis)', pct(w, 99) <= 50],
      [`restart to serving, ${RECORDED} sessions, ms`, null, restartMs, 1, '<= 2000 ms', restartMs <= 2000],
      ['  same, as a new process (node start)', null, processMs, 1, '<= 2000 ms', processMs <= 2000],
    ];
    printTable(rows);
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}
