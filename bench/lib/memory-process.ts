/**
 * @module
 * Starts `memory-server-child.ts` as a child process (SQLite, or a PostgreSQL replica) and reads its
 * memory and CPU time from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS } from '../../src/server/node-flags.ts';

const CHILD = fileURLToPath(new URL('./memory-server-child.ts', import.meta.url));

/** A memory server running in a child process. */
export interface ChildServer {
  url: string;
  pid: number;
  adminKey: string;
  /** Resident set size now and at its peak, bytes (from /proc/<pid>/status). */
  memory(): { rss: number; peak: number };
  /** CPU time the process has used (all threads, user + system), microseconds. */
  cpuMicros(): number;
  /** SIGTERM, then waits for exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/** A PostgreSQL replica instead of SQLite: its database, pool and the admin key all replicas share. */
export interface ChildPostgres {
  url: string;
  poolSize: number;
  adminKey: string;
}

/**
 * Starts a memory server on `dataDir` in a child process (SQLite there, or a replica on `postgres`).
 * @param nodeArgs extra node flags for the child (e.g. `--cpu-prof`)
 */
export async function startChildServer(
  dataDir: string,
  nodeArgs: string[] = [],
  postgres?: ChildPostgres,
): Promise<ChildServer> {
  const args = postgres ? [dataDir, postgres.url, String(postgres.poolSize)] : [dataDir];
  // The flags bin/tether runs the servers with: the memory measured is a deployment's.
  const flags = [...SERVER_NODE_FLAGS, ...nodeArgs];
  const child: ChildProcess = spawn(process.execPath, [...flags, '--import', 'tsx', CHILD, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: postgres ? { ...process.env, TETHER_ADMIN_KEY: postgres.adminKey } : process.env,
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([l]) => l as string),
    exited.then(([code]) => {
      throw new Error(`memory server child exited early (code ${String(code)})`);
    }),
  ]);
  lines.close();
  const info = JSON.parse(first) as { url: string; pid: number; adminKeyFile: string | null };
  const adminKey = postgres?.adminKey ?? readFileSync(info.adminKeyFile as string, 'utf8').trim();
  let stopped: Promise<void> | undefined;
  return {
    url: info.url,
    pid: info.pid,
    adminKey,
    memory: () => readMemory(info.pid),
    cpuMicros: () => readCpuMicros(info.pid),
    stop() {
      stopped ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(kill);
      })();
      return stopped;
    },
  };
}

/** VmRSS and VmHWM of a process, bytes. */
export function readMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : Number.NaN;
  };
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

/** User + system CPU time of a process (all its threads), microseconds, from /proc/<pid>/stat. */
export function readCpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / USER_HZ) * 1e6;
}
