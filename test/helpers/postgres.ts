/**
 * @module
 * Test helper: a real PostgreSQL server (Debian's `/usr/lib/postgresql/<n>/bin`), made with initdb in a
 * temp folder on a free port, password authentication on TCP. As root, initdb and postgres run as the
 * `postgres` user on a folder it owns (they refuse root). One server per test file; each test file (or
 * test) takes its own database with `createDatabase()`. `stop()` ends the server and removes the folder.
 * initdb runs once per PostgreSQL version and user into a template cluster kept in the temp folder; each server
 * starts on a copy of it (`cp -a`: ~0.3 s of CPU where initdb takes ~1.5 s) and sets its own password.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import pg from 'pg';

/** A running test PostgreSQL. */
export interface TestPostgres {
  host: string;
  port: number;
  user: string;
  password: string;
  /** URL of `database` (default `postgres`), password included. */
  url(database?: string): string;
  /** Creates a fresh empty database and returns its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server (fast shutdown), keeping its folder: `start()` brings it back on the same port. */
  halt(): Promise<void>;
  /** Starts a halted server again. */
  start(): Promise<void>;
  /** Stops the server and removes its folder. Safe to call twice. */
  stop(): Promise<void>;
}

/** The folder holding initdb and postgres. */
export function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(`Cannot start PostgreSQL for tests as no ${root}/*/bin/initdb exists: apt-get install postgresql`);
  }
  return join(root, versions[0] as string, 'bin');
}

const asRoot = process.getuid?.() === 0;

/** uid/gid of the `postgres` user when we are root (spawned processes then run as it), else nothing. */
function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (!asRoot) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * The template cluster of `bin`'s PostgreSQL for this user, made by initdb on first use. It is made in a folder of
 * its own and renamed into place, so a process sees a whole template or none (two processes making it at once
 * each run initdb; the first rename wins). Its password is thrown away: each server sets its own.
 */
function templateCluster(bin: string, owner: { uid: number; gid: number } | Record<string, never>): string {
  // The name changes with the initdb arguments below (-v1), so a template made differently is never used.
  const template = join(tmpdir(), `tether-pg-template-${basename(dirname(bin))}-${process.getuid?.() ?? 0}-v1`);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const building = mkdtempSync(join(tmpdir(), 'tether-pg-building-'));
  try {
    const pwfile = join(building, 'pw');
    writeFileSync(pwfile, `${randomBytes(12).toString('hex')}\n`);
    if ('uid' in owner) {
      chownSync(building, owner.uid, owner.gid);
      chownSync(pwfile, owner.uid, owner.gid);
    }
    chmodSync(building, 0o700);
    execFileSync(
      join(bin, 'initdb'),
      [
        '-D',
        join(building, 'data'),
        '-U',
        USER,
        `--pwfile=${pwfile}`,
        '--auth-local=trust',
        '--auth-host=scram-sha-256',
        '--no-sync',
        '-E',
        'UTF8',
        '--locale=C',
      ],
      { stdio: 'pipe', ...owner },
    );
    try {
      renameSync(join(building, 'data'), template);
    } catch (err) {
      if (!existsSync(join(template, 'PG_VERSION'))) throw err;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/** The role the tests connect as. */
const USER = 'tether';

/** A port free on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Servers still running, stopped if this process exits (a killed test run leaves no PostgreSQL behind). */
const running = new Set<ChildProcess>();
let exitHooked = false;
function stopAllOnExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const c of running) c.kill('SIGINT');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      for (const c of running) c.kill('SIGINT');
      process.exit(128 + (signal === 'SIGTERM' ? 15 : 2));
    });
  }
}

/** Options of `startPostgres`. */
export interface StartPostgresOptions {
  /**
   * Server settings (`-c name=value`) over the test defaults: `fsync=off`, `shared_buffers=32MB`,
   * `max_connections=200`. A benchmark passes `fsync: 'on'` to measure durable commits.
   */
  settings?: Record<string, string>;
}

/** Starts a fresh PostgreSQL. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'tether-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const user = USER;
  const owner = postgresUser();
  if ('uid' in owner) chownSync(dir, owner.uid, owner.gid);
  chmodSync(dir, 0o700);
  execFileSync('cp', ['-a', templateCluster(bin, owner), data], { stdio: 'pipe', ...owner });
  const port = await freePort();
  let child: ChildProcess | null = null;
  let stopped = false;
  // The copy holds the template's password until the first start sets this server's own.
  let passwordSet = false;

  const url = (database = 'postgres') =>
    `postgres://${user}:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;

  const start = async () => {
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1',
      // Tests need durability of a clean shutdown only; a test PostgreSQL is never killed.
      fsync: 'off',
      shared_buffers: '32MB',
      max_connections: '200',
      ...options.settings,
    };
    const args = ['-D', data, '-p', String(port), '-k', dir];
    for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);
    const proc = spawn(join(bin, 'postgres'), args, { stdio: ['ignore', 'ignore', 'pipe'], ...owner });
    stopAllOnExit();
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child = proc;
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`test PostgreSQL exited at start: ${stderr}`);
      // Before its password is set, over the Unix socket in `dir` (trusted); then over TCP, as the tests connect.
      const client = new pg.Client(
        passwordSet ? { connectionString: url() } : { host: dir, port, user, database: 'postgres' },
      );
      try {
        await client.connect();
        if (!passwordSet) {
          await client.query(`ALTER ROLE ${user} PASSWORD '${password}'`);
          passwordSet = true;
          await client.end();
          continue;
        }
        await client.end();
        return;
      } catch {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`test PostgreSQL did not accept connections: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };

  const halt = async () => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    // SIGINT is PostgreSQL's fast shutdown: open sessions are ended, the data is consistent.
    proc.kill('SIGINT');
    await exited;
  };

  await start();
  let databases = 0;
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    url,
    async createDatabase() {
      databases += 1;
      const name = `t${process.pid}_${databases}_${randomBytes(3).toString('hex')}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    halt,
    start,
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
