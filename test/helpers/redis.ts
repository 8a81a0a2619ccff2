/**
 * @module
 * Starts a real `redis-server` for a test: a free port on 127.0.0.1, data in a fresh temp folder, no
 * snapshots (`--save ''`) unless `aof` asks for an append-only file (fsync always, so a restart loses nothing).
 * `stop()` and `start()` again on the same port and folder simulate an outage, `freeze()` and `thaw()` (SIGSTOP,
 * SIGCONT) a server that is alive but silent; everything is removed after.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running (or stopped) test Redis. */
export interface TestRedis {
  port: number;
  /** `redis://127.0.0.1:<port>/0` */
  url: string;
  /** A fresh key prefix for one test (`t_<uuid>:`), so tests sharing a server never see each other's keys. */
  prefix(): string;
  /** Stops the server (SIGTERM: with AOF it syncs first) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder. */
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its port and connections (the kernel still accepts) but answers nothing. */
  freeze(): void;
  /** SIGCONT after `freeze` (also done by `stop` and the cleanup). */
  thaw(): void;
}

/** Options of `startRedis`. */
export interface RedisOptions {
  /** Append-only file with `appendfsync always`. @default false */
  aof?: boolean;
  /** Start the server now; false leaves its port unanswered until `start()`. @default true */
  start?: boolean;
}

/** Where the cleanup goes: a TestContext (`t`), or `{ after }` from node:test for a whole file. */
export interface Cleanup {
  after(fn: () => Promise<void>): void;
}

/** Starts redis-server; stopped and its folder removed by `t.after`. */
export async function startRedis(t: Cleanup, o: RedisOptions = {}): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'tether-redis-'));
  const port = await freePort();
  let child: ChildProcess | null = null;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  if (o.aof) args.push('--appendonly', 'yes', '--appendfsync', 'always');
  else args.push('--appendonly', 'no');
  const start = async () => {
    const c = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    let out = '';
    c.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
    });
    await new Promise<void>((resolve, reject) => {
      const onData = () => {
        if (out.includes('Ready to accept connections')) {
          c.stdout?.off('data', onData);
          resolve();
        }
      };
      c.stdout?.on('data', onData);
      c.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
      c.once('error', reject);
    });
  };
  const signal = (sig: NodeJS.Signals) => {
    const c = child as ChildProcess | null;
    if (c && c.exitCode === null) c.kill(sig);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGCONT'); // a frozen server would never see the SIGTERM
    c.kill('SIGTERM');
    await exited;
  };
  t.after(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });
  if (o.start ?? true) await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    prefix: () => `t_${randomUUID()}:`,
    stop,
    start,
    freeze: () => signal('SIGSTOP'),
    thaw: () => signal('SIGCONT'),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
