/**
 * @module
 * Test helper: `tether up` as a child process on free ports over a data folder, its URLs read from
 * the banner (public gateway, gateway admin, memory server), and its admin credentials from the folder.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AdminInstance, send, waitFor } from '../../gateway/helpers/harness.ts';
import { spawnTether } from '../../helpers/tether-cli.ts';

/** A running `tether up`. */
export interface UpRun {
  child: ChildProcess;
  /** Everything it printed so far. */
  out: () => string;
  /** Public gateway, gateway admin, memory server. */
  urls: [string, string, string];
}

/** Starts `tether up --data data --services manifest` and resolves once its banner is out (killed if it never is). */
export async function startUp(data: string, manifest: string): Promise<UpRun> {
  // From source (test/helpers/tether-cli.ts): never a stale dist/.
  const child = spawnTether(
    ['up', '--data', data, '--services', manifest, '--memory-port', '0', '--port', '0', '--admin-port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  // Generous: a start under load is slow, and the start is not what is tested.
  try {
    await waitFor('the "Tether is up." banner', () => out.includes('Tether is up.') || child.exitCode !== null, {
      timeoutMs: 120_000,
    });
  } catch (err) {
    // Never leave a platform running behind a failed start.
    child.kill('SIGKILL');
    throw err;
  }
  const gateway = /session gateway (http:\/\/\S+)\s+admin (http:\/\/\S+)\/_tether/.exec(out);
  const memory = /memory server\s+(http:\/\/\S+)/.exec(out);
  assert.ok(gateway && memory, out);
  return { child, out: () => out, urls: [gateway[1], gateway[2], memory[1]] as [string, string, string] };
}

/** The gateway's instances, as its admin API lists them. */
export async function upInstances(data: string, adminUrl: string): Promise<AdminInstance[]> {
  const token = readFileSync(join(data, 'gateway', 'admin.token'), 'utf8').trim();
  const r = await send(adminUrl, { path: '/_tether/instances', headers: { authorization: `Bearer ${token}` } });
  return JSON.parse(r.body) as AdminInstance[];
}

/** The memory server's admin key of a `tether up` data folder. */
export function upAdminKey(data: string): string {
  return readFileSync(join(data, 'memory', 'admin.key'), 'utf8').trim();
}
