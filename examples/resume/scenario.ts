/**
 * The crash-and-resume scenario, shared by `run.ts` and its test: mints a key for `examples:worker`,
 * starts a worker, kills it with SIGKILL once it reported step 2, starts a second worker and waits
 * for it to finish. Returns the key and every line the workers printed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

/** A started worker and its parsed stdout lines as they come. */
function startWorker(env: Record<string, string>, onLine: (event: Record<string, unknown>) => void): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    try {
      onLine(JSON.parse(line) as Record<string, unknown>);
    } catch {}
  });
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );

/** Runs the scenario against the memory server at `url`. */
export async function runCrashAndResume(options: {
  url: string;
  adminKey: string;
  log: (line: string) => void;
  leaseTtlMs?: number;
}): Promise<{ key: string; events: Record<string, unknown>[] }> {
  const minted = await fetch(new URL('/v1/keys', options.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${options.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'examples', agent: 'worker', ttl_seconds: 3600 }),
  });
  if (minted.status !== 201) throw new Error(`minting a key failed: ${await minted.text()}`);
  const { key } = (await minted.json()) as { key: string };
  const env = { TETHER_URL: options.url, TETHER_KEY: key, LEASE_TTL_MS: String(options.leaseTtlMs ?? 2000) };
  const events: Record<string, unknown>[] = [];

  const first = startWorker(env, (e) => {
    events.push(e);
    options.log(`worker 1 ${JSON.stringify(e)}`);
    if (e.event === 'step' && e.step === 2) {
      options.log('killing worker 1 with SIGKILL after step 2 (its lease is still live)');
      first.kill('SIGKILL');
    }
  });
  const firstExit = await exited(first);
  options.log(`worker 1 exited: ${firstExit.signal ?? firstExit.code}`);
  if (firstExit.signal !== 'SIGKILL') throw new Error(`worker 1 ended before step 2: ${JSON.stringify(events.at(-1))}`);

  const second = startWorker(env, (e) => {
    events.push(e);
    options.log(`worker 2 ${JSON.stringify(e)}`);
  });
  const secondExit = await exited(second);
  options.log(`worker 2 exited: ${secondExit.signal ?? secondExit.code}`);
  if (secondExit.code !== 0) throw new Error(`worker 2 failed: ${secondExit.signal ?? secondExit.code}`);
  return { key, events };
}
