/**
 * @module
 * Test harness for the gateway: service YAML running examples/session-app, a gateway on loopback
 * ports with a silent logger (closed by `t.after`), raw HTTP requests with a chosen Host header,
 * admin API reads, `/proc/<pid>/stat` state and a bounded `waitFor` poll (no blind sleeps).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { openLocalRuntime, pickSessionStore } from '../../../src/cli/drivers.ts';
import { silentLogger } from '../../../src/common/log.ts';
import { type Gateway, type GatewayOptions, startGateway } from '../../../src/gateway/gateway.ts';
import type { LocalRuntimeOptions } from '../../../src/runtime/local/local-runtime.ts';

/** Absolute path of the example app. */
export const APP = resolve(import.meta.dirname, '../../../examples/session-app/server.mjs');

/** A Knative Service manifest running the example app with these annotations. */
export function serviceYaml(name: string, annotations: Record<string, string>, containerExtra = ''): string {
  const ann = Object.entries({ 'serving.knative.dev/workload-type': 'sandbox', ...annotations })
    .map(([k, v]) => `        ${k}: "${v}"`)
    .join('\n');
  return `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ${name}
spec:
  template:
    metadata:
      annotations:
${ann}
    spec:
      containers:
        - command: ["node", "${APP}"]
${containerExtra}`;
}

/** Writes `yaml` into a fresh temp folder (removed after the test) and returns the file path. */
export async function writeManifest(t: TestContext, yaml: string, fileName = 'services.yaml'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tether-gw-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, fileName);
  await writeFile(file, yaml);
  return file;
}

/** Options of a test gateway: the gateway's, and those of the local runtime made when no `runtime` is given. */
export type TestGatewayOptions = Partial<GatewayOptions> & Partial<Omit<LocalRuntimeOptions, 'log'>>;

/**
 * The drivers of a test gateway, from the CLI's driver table: `options.runtime`, else a local runtime (grace
 * 1 s); `options.sessionStore`, else the memory one on the gateway's clock.
 */
export function testGatewayDrivers(options: TestGatewayOptions): Pick<GatewayOptions, 'runtime' | 'sessionStore'> {
  const { runtime, sessionStore, graceMs, stateDir, isolation, logLines, keepEnded } = options;
  const log = options.log ?? silentLogger();
  return {
    // The logger the gateway gave its own local runtime before the driver table built it.
    runtime:
      runtime ??
      openLocalRuntime({
        log: log.child({ component: 'gateway' }),
        graceMs: graceMs ?? 1000,
        stateDir,
        isolation,
        logLines,
        keepEnded,
      }),
    sessionStore:
      sessionStore ??
      pickSessionStore({ sessionStore: 'memory', redisPrefix: 'tether:' }, log, { clock: options.clock }),
  };
}

/** Starts a gateway on loopback with random ports; closed after the test. */
export async function startTestGateway(
  t: TestContext,
  yaml: string,
  options: TestGatewayOptions = {},
): Promise<Gateway> {
  const file = await writeManifest(t, yaml);
  const { graceMs: _g, stateDir: _s, isolation: _i, logLines: _l, keepEnded: _k, ...gateway } = options;
  const gw = await startGateway({
    services: file,
    port: 0,
    adminPort: 0,
    host: '127.0.0.1',
    log: silentLogger(),
    reconcileIntervalMs: 50,
    ...gateway,
    ...testGatewayDrivers(options),
  });
  t.after(() => gw.close());
  return gw;
}

/** A finished HTTP exchange. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one request (fresh connection) with a chosen Host header. */
export function send(
  baseUrl: string,
  opts: { host?: string; path?: string; method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  const url = new URL(opts.path ?? '/', baseUrl);
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: opts.method ?? 'GET',
        agent: false,
        headers: { ...(opts.host ? { host: opts.host } : {}), ...opts.headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** GETs an admin path and parses JSON. */
export async function admin<T = unknown>(gw: Gateway, path: string): Promise<T> {
  const r = await send(gw.adminUrl, { path });
  if (r.status !== 200) throw new Error(`admin ${path}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as T;
}

/** An instance as `/_tether/instances` lists it. */
export interface AdminInstance {
  name: string;
  service: string;
  state: 'starting' | 'running' | 'paused' | 'stopping';
  pid: number | null;
  sessions: string[];
  warm: boolean;
}

/** The `/proc/<pid>/stat` state letter (`R`, `S`, `T`, `Z`…), or null when the process is gone. */
export function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return null;
  }
}

/** True when the process is gone or a zombie. */
export function isGone(pid: number): boolean {
  const s = procState(pid);
  return s === null || s === 'Z' || s === 'X';
}

/**
 * Polls `check` until it returns a truthy value, every `intervalMs`, for at most `timeoutMs` (default 60 s: a
 * bound on an event, not a timing check, so generous that a CI machine at load 13 is slow here, never failed).
 * @throws {Error} naming `what` on timeout
 */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 60_000, intervalMs = 25 } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
