/**
 * @module
 * A real redis-server and PostgreSQL for the isolation fence test, started on free ports, listening on
 * every address (as a careless local database would; redis with a password, PostgreSQL admitting only
 * loopback clients), data in temp folders, stopped after the test. The fence must keep instances away.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pickFreePort, probeTcp } from '../../src/runtime/local/readiness.ts';

const PG_BIN = '/usr/lib/postgresql/15/bin';

async function untilListening(port: number, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await probeTcp('127.0.0.1', port)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

function stopAfter(t: TestContext, child: ChildProcess, dir: string, signal: NodeJS.Signals): void {
  t.after(async () => {
    if (child.exitCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  });
}

/** Starts redis-server on all addresses; returns its port. */
export async function startRedis(t: TestContext): Promise<number> {
  const port = await pickFreePort();
  const dir = mkdtempSync(join(tmpdir(), 'tether-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '0.0.0.0',
      '--requirepass',
      randomBytes(16).toString('hex'),
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
  stopAfter(t, child, dir, 'SIGTERM');
  await untilListening(port, child, 'redis-server');
  return port;
}

/** Starts PostgreSQL 15 on all addresses (as the postgres user, on a fresh cluster); returns its port. */
export async function startPostgres(t: TestContext): Promise<number> {
  const port = await pickFreePort();
  const dir = mkdtempSync(join(tmpdir(), 'tether-pg-'));
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  execFileSync(join(PG_BIN, 'initdb'), ['-D', data, '-A', 'reject', '--no-sync', '-U', 'postgres'], {
    uid,
    gid,
    stdio: 'ignore',
  });
  const child = spawn(
    join(PG_BIN, 'postgres'),
    ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=*', '-c', 'fsync=off'],
    { uid, gid, stdio: 'ignore' },
  );
  stopAfter(t, child, dir, 'SIGINT');
  await untilListening(port, child, 'postgres');
  return port;
}
