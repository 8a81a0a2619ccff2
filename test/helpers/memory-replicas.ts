/**
 * @module
 * Test helper: `tether memory --store postgres` replicas as real processes on one database (one
 * admin key for all, from `TETHER_ADMIN_KEY`), and a small JSON client. Each replica gets its own
 * temp data folder (which stays empty) and a free port; `stop()` SIGTERMs it, `kill()` SIGKILLs it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomHex } from '../../src/common/ids.ts';
import { startPostgres, type TestPostgres } from './postgres.ts';
import { spawnTether } from './tether-cli.ts';

/** A running replica. */
export interface Replica {
  url: string;
  child: ChildProcess;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** Calls it; JSON in and out. */
  call(
    method: string,
    path: string,
    key: string,
    body?: unknown,
  ): Promise<{ status: number; headers: Headers; body: any }>;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

/** A fresh bootstrap admin key. */
export const newAdminKey = (): string => `tth_${randomHex(8)}_${randomHex(32)}`;

/** Starts `tether memory --store postgres --postgres-url url` and resolves once it listens. */
export async function startReplica(
  url: string,
  adminKey: string,
  extraArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Replica> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tether-replica-'));
  const child = spawnTether(
    ['memory', '--port', '0', '--data', dataDir, '--store', 'postgres', '--postgres-url', url, ...extraArgs],
    { env: { ...process.env, TETHER_ADMIN_KEY: adminKey, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  exited.then(() => rmSync(dataDir, { recursive: true, force: true }));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica printed no URL:\n${out}`)), 120_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica exited ${code}:\n${out}`));
    });
  });
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url: base,
    child,
    output: () => out,
    async call(method, path, key, body) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, headers: res.headers, body: parsed };
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}

/** Mints an agent key for `tenant:agent` through `replica`. */
export async function mintAgentKey(replica: Replica, adminKey: string, tenant: string, agent: string): Promise<string> {
  const r = await replica.call('POST', '/v1/keys', adminKey, { tenant, agent, ttl_seconds: 3600 });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.key as string;
}

let tenants = 0;

/** A fresh tenant named `<prefix><n><time>` and an agent key of it, minted through `replica` (one per test). */
export async function freshAgent(
  replica: Replica,
  adminKey: string,
  prefix: string,
): Promise<{ tenant: string; key: string }> {
  tenants += 1;
  const tenant = `${prefix}${tenants}${Date.now().toString(36)}`;
  return { tenant, key: await mintAgentKey(replica, adminKey, tenant, 'run') };
}

/** Polls `probe` every 20 ms until it returns true; resolves with the ms it took, rejects after `limitMs`. */
export async function within(limitMs: number, probe: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - start;
    if (Date.now() - start > limitMs) throw new Error(`not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A PostgreSQL of its own with one fresh database, and two replicas started on it at once. */
export interface ReplicaPair {
  pg: TestPostgres;
  a: Replica;
  b: Replica;
}

/**
 * Starts a PostgreSQL, makes a database and starts two replicas on it at once (so migrations also run
 * concurrently, under their advisory lock). For a suite's `before`; `stopReplicaPair` for its `after`.
 */
export async function startReplicaPair(adminKey: string): Promise<ReplicaPair> {
  const pg = await startPostgres();
  const url = await pg.createDatabase();
  const [a, b] = await Promise.all([startReplica(url, adminKey), startReplica(url, adminKey)]);
  return { pg, a, b };
}

/** Stops both replicas (SIGKILL for one that has not gone 10 s after SIGTERM), then the PostgreSQL. */
export async function stopReplicaPair(pair: Partial<ReplicaPair>): Promise<void> {
  await Promise.all(
    [pair.a, pair.b].map(async (r) => {
      if (!r) return;
      const late = setTimeout(() => void r.kill(), 10_000);
      await r.stop();
      clearTimeout(late);
    }),
  );
  await pair.pg?.stop();
}
