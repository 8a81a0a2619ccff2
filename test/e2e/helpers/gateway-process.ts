/**
 * @module
 * `tether gateway` as a child process for whole-process tests (a SIGKILL must really kill the gateway):
 * spawns it with deployment secrets and the admin token in the environment (so nothing is written into the
 * checkout's `.tether/gateway`), waits for its "gateway listening" line and reads its admin API as JSON with
 * that token; or runs it to its exit (a refused flag). Used by the Redis e2e tests.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { send, waitFor } from '../../gateway/helpers/harness.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
const CLI = resolve(ROOT, 'test/gateway/helpers/gateway-cli.ts');
/** The admin token every gateway these helpers start requires. */
export const ADMIN_TOKEN = 'a'.repeat(64);
/** Authorization for the admin API of a gateway these helpers start. */
export const ADMIN_AUTH: Readonly<Record<string, string>> = Object.freeze({ authorization: `Bearer ${ADMIN_TOKEN}` });
const SECRETS = {
  TETHER_CLAIM_SECRET: 'c'.repeat(64),
  TETHER_SESSION_SECRET: 's'.repeat(64),
  TETHER_GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
};

/** The flags of a test gateway on loopback with ports the OS picks. */
export const LOOPBACK_PORTS: readonly string[] = ['--port', '0', '--admin-port', '0', '--host', '127.0.0.1'];

/** A running gateway process. */
export interface GatewayRun {
  child: ChildProcess;
  /** Its stdout and stderr so far. */
  out: () => string;
  publicUrl: string;
  adminUrl: string;
}

/** One session as the admin API lists it (the fields these tests read). */
export interface AdminSession {
  id: string;
  service: string;
  instance: string;
  state: string;
  idle_deadline: string | null;
  expires_at: string | null;
  gateway: string;
}

/** Starts `tether gateway <args>` and resolves once it listens. @throws {Error} with its output if it exits first */
export async function runGateway(args: string[]): Promise<GatewayRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'gateway', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TETHER_LOG_LEVEL: 'info', ...SECRETS },
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  const line = await waitFor(
    'gateway listening',
    () =>
      out.split('\n').find((l) => l.includes('"gateway listening"')) ??
      (child.exitCode !== null ? `exit ${out}` : undefined),
    // Generous: a start through tsx takes seconds, many more on a loaded machine, and is not what is tested.
    { timeoutMs: 120_000 },
  );
  if (line.startsWith('exit')) throw new Error(line);
  const { publicUrl, adminUrl } = JSON.parse(line) as { publicUrl: string; adminUrl: string };
  return { child, out: () => out, publicUrl, adminUrl };
}

/** GET an admin path, asserting 200, parsed. */
export async function adminJson<T>(run: GatewayRun, path: string): Promise<T> {
  const r = await send(run.adminUrl, { path, headers: { ...ADMIN_AUTH } });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as T;
}

/** Runs `tether gateway <args>` expecting it to exit by itself (a refused flag); its exit code and output. */
export async function gatewayExit(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'gateway', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TETHER_REDIS_URL: undefined, ...SECRETS, ...env },
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  // Only stops a hang: a refusal comes after the start-up (seconds through tsx, many more under load).
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, out };
}
