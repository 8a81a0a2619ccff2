/**
 * @module
 * Shared parts of `npm run bench:gateway` (bench/gateway.ts, bench/lib/gateway-redis.ts): load by wrk (or a
 * node:http keep-alive driver), time to first byte, admin reads, bounded polls, formatting. Loopback only.
 */
import { execFile } from 'node:child_process';
import { Agent, request } from 'node:http';
import { promisify } from 'node:util';
import { openLocalRuntime, pickSessionStore } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import type { Gateway, GatewayOptions } from '../../src/gateway/gateway.ts';
import type { Isolation } from '../../src/runtime/local/isolation/sandbox.ts';
import type { SessionStore } from '../../src/sessions/session-store.ts';
import { serviceYaml } from '../../test/gateway/helpers/harness.ts';

export const DURATION_S = Number(process.env.BENCH_SECONDS ?? 5);

/** Grace of the bench's local runtimes (SIGTERM to SIGKILL), ms. */
export const BENCH_GRACE_MS = 1000;

/** A bench gateway's options but its drivers: loopback, ports the OS picks, quick reconciles, no new-session limit (one address makes them all). */
export function benchGatewayBase(services: string): Omit<GatewayOptions, 'runtime' | 'sessionStore'> {
  return {
    services,
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    log: silentLogger(),
    reconcileIntervalMs: 20,
    newSessionsPerMinute: 0,
  };
}

/**
 * A bench gateway on `services` with this tree's drivers (cli/drivers.ts): a local runtime (its state in
 * `stateDir`, sandboxed by `isolation`) and `sessionStore`, else the memory one.
 */
export function benchGatewayOptions(
  services: string,
  o: { stateDir?: string; isolation?: Isolation; sessionStore?: SessionStore } = {},
): GatewayOptions {
  const log = silentLogger();
  return {
    ...benchGatewayBase(services),
    runtime: openLocalRuntime({ log, graceMs: BENCH_GRACE_MS, stateDir: o.stateDir, isolation: o.isolation }),
    sessionStore: o.sessionStore ?? pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, log),
  };
}

export interface Load {
  rps: number;
  p50: number;
  p99: number;
}

export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

function wrkMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
}

/** Loads `url` for `seconds` with `connections` keep-alive connections. */
export async function load(
  wrk: string | null,
  url: string,
  headers: Record<string, string>,
  connections: number,
  seconds = DURATION_S,
): Promise<Load> {
  assertLoopback(url);
  if (wrk) {
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
    for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
    // Async: the gateway runs in this process and must keep serving while wrk runs.
    const { stdout: out } = await promisify(execFile)(wrk, [...args, url], { encoding: 'utf8' });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const p50 = wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '');
    const p99 = wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '');
    if (/Non-2xx/.test(out) || /Socket errors/.test(out))
      process.stderr.write(`wrk reported errors for ${url}:\n${out}\n`);
    return { rps, p50, p99 };
  }
  return nodeLoad(url, headers, connections, seconds);
}

async function nodeLoad(
  url: string,
  headers: Record<string, string>,
  connections: number,
  seconds: number,
): Promise<Load> {
  const u = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const lat: number[] = [];
  const end = performance.now() + seconds * 1000;
  const one = () =>
    new Promise<void>((ok, fail) => {
      const t0 = performance.now();
      request({ host: u.hostname, port: u.port, path: u.pathname, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => {
          lat.push(performance.now() - t0);
          ok();
        });
      })
        .on('error', fail)
        .end();
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end && lat.length < 5_000_000) await one();
    }),
  );
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { rps: lat.length / ((performance.now() - t0) / 1000), p50: pct(lat, 50), p99: pct(lat, 99) };
}

export function assertLoopback(url: string): void {
  const h = new URL(url).hostname;
  if (h !== '127.0.0.1' && h !== 'localhost' && h !== '[::1]') throw new Error(`bench refuses non-loopback ${url}`);
}

/** Time to first byte of one fresh-connection GET (ms), and the response's pid header. */
export function firstByte(
  url: string,
  headers: Record<string, string>,
): Promise<{ ms: number; pid: number; status: number }> {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    request({ host: u.hostname, port: u.port, path: u.pathname, agent: false, headers }, (res) => {
      const ms = performance.now() - t0;
      res.resume();
      res.on('end', () => ok({ ms, pid: Number(res.headers['x-pid']), status: res.statusCode ?? 0 }));
    })
      .on('error', fail)
      .end();
  });
}

/** GETs `path` from `base` (fresh connection) and parses JSON. */
export async function getJson<T>(base: string, path: string, headers: Record<string, string> = {}): Promise<T> {
  const u = new URL(path, base);
  assertLoopback(base);
  return new Promise((ok, fail) => {
    request({ host: u.hostname, port: u.port, path: u.pathname, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok(JSON.parse(Buffer.concat(chunks).toString()) as T));
    })
      .on('error', fail)
      .end();
  });
}

export const instances = (gw: Gateway) => getJson<Inst[]>(gw.adminUrl, '/_tether/instances');

export type Inst = { service: string; state: string; warm: boolean; sessions: string[] };

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A bench service: the example app with the bench's cookie and these annotations. */
export function service(name: string, ann: Record<string, string>): string {
  return serviceYaml(name, { 'serving.knative.dev/session-affinity-cookie': 's', ...ann });
}

export function fmt(n: number, digits = 2): string {
  return Number.isFinite(n) ? n.toFixed(digits) : 'n/a';
}
