/**
 * @module
 * `npm run bench:gateway -- --baseline <checkout>`: this tree's gateway against another checkout's (e.g. main
 * before a change), side by side in one run: added p99 over a direct connection at 1 connection (interleaved
 * rounds, median), new session from the warm pool and resume from pause to first byte (samples alternated
 * between the two, which goes first swapped each time), each with the ratio this/baseline. The baseline's `startGateway` is imported from
 * `<checkout>/src/gateway/gateway.ts`; both get the same options and services, and each its own tree's local
 * runtime and memory session store: from its `src/cli/drivers.ts`, or, in a checkout older than the driver
 * table, built by its `startGateway` from `stateDir` and `graceMs`. Prints `uptime` first.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Gateway, type GatewayOptions, startGateway } from '../../src/gateway/gateway.ts';
import {
  BENCH_GRACE_MS,
  benchGatewayBase,
  benchGatewayOptions,
  firstByte,
  fmt,
  getJson,
  type Inst,
  type Load,
  load,
  pct,
  service,
  until,
} from './gateway-load.ts';
import { which } from './which.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

type Start = (o: GatewayOptions) => Promise<Gateway>;
/** The driver table of the baseline checkout (`src/cli/drivers.ts`), when it has one. */
type BaseDrivers = typeof import('../../src/cli/drivers.ts');

interface Side {
  name: string;
  gw: Gateway;
  direct: string;
  through: string;
}

const HEADERS = { Host: 'bench.default.example.com', Cookie: 's=bench' };

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
}

const list = (gw: Gateway) => getJson<Inst[]>(gw.adminUrl, '/_tether/instances');

/** Runs the comparison against the checkout at `dir`. */
export async function compareBaseline(dir: string): Promise<void> {
  const baseStart = ((await import(resolve(dir, 'src/gateway/gateway.ts'))) as { startGateway: Start }).startGateway;
  const baseDrivers = (await import(resolve(dir, 'src/cli/drivers.ts')).catch(() => undefined)) as
    | BaseDrivers
    | undefined;
  const baseOptions = (stateDir: string): GatewayOptions => {
    const base = benchGatewayBase(file);
    if (!baseDrivers) return { ...base, stateDir, graceMs: BENCH_GRACE_MS } as unknown as GatewayOptions;
    const log = base.log as NonNullable<GatewayOptions['log']>;
    return {
      ...base,
      runtime: baseDrivers.openLocalRuntime({ log, graceMs: BENCH_GRACE_MS, stateDir }),
      sessionStore: baseDrivers.pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, log),
    };
  };
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  const tmp = await mkdtemp(join(tmpdir(), 'tether-bench-base-'));
  const file = join(tmp, 'services.yaml');
  await writeFile(
    file,
    [
      service('bench', { 'serving.knative.dev/session-timeout': '30m' }),
      service('warm', { 'serving.knative.dev/warm-pool': '3', 'serving.knative.dev/session-timeout': '100ms' }),
      service('pause', {
        'serving.knative.dev/sandbox-idle-policy': 'pause',
        'serving.knative.dev/session-timeout': '100ms',
      }),
    ].join('---\n'),
  );
  const sides: Side[] = [];
  try {
    for (const [name, start, options] of [
      ['this', startGateway, (stateDir: string) => benchGatewayOptions(file, { stateDir })],
      ['baseline', baseStart, baseOptions],
    ] as const) {
      const gw = await start(options(join(tmp, `state-${name}`)));
      const info = await getJson<{ env: { PORT: string } }>(gw.publicUrl, '/env', HEADERS);
      sides.push({ name, gw, direct: `http://127.0.0.1:${info.env.PORT}/`, through: `${gw.publicUrl}/` });
    }
    const wrk = which('wrk', ['/usr/bin/wrk']);
    console.log(
      `this tree vs ${dir}: load by ${wrk ? 'wrk' : 'node:http driver'}, ${SECONDS}s runs, ${ROUNDS} rounds, ${SAMPLES} session samples`,
    );
    for (const s of sides) for (const url of [s.direct, s.through]) await load(wrk, url, HEADERS, 1, 1); // warm-up
    const added = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    // Each round and sample swaps which side goes first, so neither always runs on the quieter moment.
    const ordered = (i: number) => (i % 2 === 0 ? sides : [...sides].reverse());
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of ordered(round)) {
        const d: Load = await load(wrk, s.direct, HEADERS, 1, SECONDS);
        const g: Load = await load(wrk, s.through, HEADERS, 1, SECONDS);
        added.get(s.name)?.push(g.p99 - d.p99);
      }
    }
    const warm = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    const resume = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    const pids = new Map<string, number>();
    for (const s of sides) {
      pids.set(s.name, (await firstByte(s.through, { host: 'pause.default.example.com', cookie: 's=p' })).pid);
    }
    for (let i = 0; i < SAMPLES; i++) {
      for (const s of ordered(i)) {
        await until('warm pool full', async () => {
          const l = (await list(s.gw)).filter((x) => x.service === 'warm');
          return l.length === 3 && l.every((x) => x.warm && x.state === 'paused');
        });
        const r = await firstByte(s.through, { host: 'warm.default.example.com', cookie: `s=w${i}` });
        if (r.status !== 200) throw new Error(`${s.name}: warm claim answered ${r.status}`);
        warm.get(s.name)?.push(r.ms);
        await until('paused', async () =>
          (await list(s.gw)).some((x) => x.service === 'pause' && x.state === 'paused'),
        );
        const p = await firstByte(s.through, { host: 'pause.default.example.com', cookie: 's=p' });
        if (p.pid !== pids.get(s.name)) throw new Error(`${s.name}: resume served by another process`);
        resume.get(s.name)?.push(p.ms);
      }
    }
    const row = (label: string, f: (name: string) => number, digits = 3) => {
      const a = f('this');
      const b = f('baseline');
      // An added p99 can be at or below 0 (the direct run's tail was the worse): no ratio to hold then.
      const verdict =
        b <= 0
          ? `no ratio (baseline <= 0; this - baseline = ${fmt(a - b, digits)} ms)`
          : a <= b * 1.1
            ? 'ok (within 10%)'
            : 'SLOWER by more than 10%';
      const ratio = b > 0 ? `${fmt(a / b)}x` : '-';
      console.log(
        `  ${label.padEnd(34)} ${fmt(a, digits).padStart(8)} ${fmt(b, digits).padStart(9)}  ${ratio}  ${verdict}`,
      );
    };
    const sorted = (m: Map<string, number[]>, name: string) => [...(m.get(name) ?? [])].sort((x, y) => x - y);
    console.log('\n  row (ms)                               this  baseline  ratio');
    row('added p99 over direct, 1 connection', (n) => median(added.get(n) ?? []));
    row('new session from warm pool p50', (n) => pct(sorted(warm, n), 50));
    row('new session from warm pool p99', (n) => pct(sorted(warm, n), 99));
    row('resume from pause p50', (n) => pct(sorted(resume, n), 50));
    row('resume from pause p99', (n) => pct(sorted(resume, n), 99));
    console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  } finally {
    for (const s of sides) await s.gw.close();
    await rm(tmp, { recursive: true, force: true });
  }
}
