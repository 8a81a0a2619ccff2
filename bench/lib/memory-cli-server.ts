/**
 * @module
 * Starts `tether memory` of a checkout (this tree or another, e.g. main before a change) the way a deployment
 * does: `node <SERVER_NODE_FLAGS> <checkout>/bin/tether memory` from its own sources and node_modules, on
 * 127.0.0.1 with a free port, per-key rate limit off (the bench is thousands of requests a second on one key),
 * JSON logs. The listening line gives the URL and the admin key file; the process's memory and CPU come from
 * /proc, as for `memory-process.ts`'s child. Its log is drained; warnings are counted, errors shown.
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { SERVER_NODE_FLAGS } from '../../src/server/node-flags.ts';
import { spawnTetherOf } from '../../test/helpers/tether-cli.ts';
import { type ChildPostgres, type ChildServer, readCpuMicros, readMemory } from './memory-process.ts';

/** A CLI memory server, and what its log said. */
export interface CliServer extends ChildServer {
  /** Log lines at warn level (40) or above so far, and the message of the first. */
  warnings(): { count: number; first: string };
}

/** Longest a server may take to start listening (tsx compiles the sources at start). */
const START_MS = 120_000;
const live = new Set<ChildProcess>();
// A bench that exits without stopping its servers (an exception past its finally) leaves none behind.
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** Whether `dir` holds a checkout this module can start: its CLI (bin/tether, or src/cli/main.ts) and node_modules. */
export function isRunnableCheckout(dir: string): boolean {
  const cli = existsSync(join(dir, 'bin', 'tether')) || existsSync(join(dir, 'src', 'cli', 'main.ts'));
  return cli && existsSync(join(dir, 'node_modules'));
}

/**
 * Starts `tether memory` of `checkout` on `dataDir` (SQLite there, or PostgreSQL when `postgres` is given).
 * @param label prefixes the lines of its log this process shows (errors)
 * @param nodeArgs extra node flags after SERVER_NODE_FLAGS
 */
export async function startCliServer(o: {
  checkout: string;
  dataDir: string;
  label: string;
  nodeArgs?: string[];
  postgres?: ChildPostgres;
}): Promise<CliServer> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('TETHER_')),
  );
  const args = ['memory', '--host', '127.0.0.1', '--port', '0', '--data', o.dataDir];
  args.push('--key-rate-limit', '0', '--no-kubernetes', '--log-format', 'json');
  if (o.postgres) {
    args.push('--store', 'postgres', '--postgres-url', o.postgres.url, '--pool-size', String(o.postgres.poolSize));
    env.TETHER_ADMIN_KEY = o.postgres.adminKey;
  }
  const nodeArgs = [...SERVER_NODE_FLAGS, ...(o.nodeArgs ?? [])];
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe'];
  // A checkout from before bin/tether ran its CLI through tsx from its own folder.
  const child = existsSync(join(o.checkout, 'bin', 'tether'))
    ? spawnTetherOf(o.checkout, nodeArgs, args, { stdio, env })
    : spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(resolve(o.checkout), 'src/cli/main.ts'), ...args], {
        stdio,
        env,
        cwd: o.checkout,
      });
  live.add(child);
  const exited = once(child, 'exit').finally(() => live.delete(child));
  let warnings = 0;
  let firstWarning = '';
  let listening: (info: { url: string; adminKeyFile: string | null }) => void = () => {};
  const started = new Promise<{ url: string; adminKeyFile: string | null }>((resolve) => {
    listening = resolve;
  });
  const stderrTail: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) {
      // The banner: the URL and key file again (what a checkout that logs no listening line shows).
      const m = /memory server\s+(http:\/\/\S+)\s+\(admin key: (\/[^)]+)\)/.exec(line);
      if (m) listening({ url: m[1] as string, adminKeyFile: m[2] as string });
      return;
    }
    let entry: { level?: number; msg?: string; url?: string; adminKeyFile?: string | null };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.msg === 'memory server listening' && entry.url) {
      listening({ url: entry.url, adminKeyFile: entry.adminKeyFile ?? null });
    }
    if ((entry.level ?? 0) >= 40 && warnings++ === 0) firstWarning = line.slice(0, 300);
    if ((entry.level ?? 0) >= 50) process.stderr.write(`[${o.label}] ${line}\n`);
  });
  let timer: NodeJS.Timeout | undefined;
  const info = await Promise.race([
    started,
    exited.then(([code]) => {
      throw new Error(`${o.label}: tether memory exited early (code ${String(code)}):\n${stderrTail.join('\n')}`);
    }),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${o.label}: not listening after ${START_MS / 1000} s`)), START_MS);
    }),
  ]).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  clearTimeout(timer);
  const adminKey = o.postgres?.adminKey ?? readFileSync(info.adminKeyFile as string, 'utf8').trim();
  const pid = child.pid as number;
  let stopped: Promise<void> | undefined;
  return {
    url: info.url,
    pid,
    adminKey,
    memory: () => readMemory(pid),
    cpuMicros: () => readCpuMicros(pid),
    warnings: () => ({ count: warnings, first: firstWarning }),
    stop() {
      stopped ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        // The CLI stops gracefully within 10 s of SIGTERM; past 15 s it is killed.
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(kill);
      })();
      return stopped;
    },
  };
}
