/**
 * `tether gateway` as run from the command line (bin/tether): what it refuses before serving, and the exit
 * code it refuses with (README's exit-code table).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serviceYaml } from '../gateway/helpers/harness.ts';

const BIN = new URL('../../bin/tether', import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tether gateway …` with only PATH in the env; killed after 20 s should it start serving. */
function gateway(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, 'gateway', ...args],
      { env: { PATH: process.env.PATH ?? '' }, timeout: 20_000, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tether-cli-gateway-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('tether gateway', () => {
  it('exits 2 naming both services when one service name is in two namespaces', async () => {
    const services = join(dir, 'services');
    const data = join(dir, 'data-dup');
    await mkdir(services);
    const inNamespace = (ns: string) =>
      serviceYaml('agent', {}).replace('  name: agent\n', `  name: agent\n  namespace: ${ns}\n`);
    await writeFile(join(services, 'a.yaml'), inNamespace('team-a'));
    await writeFile(join(services, 'b.yaml'), inNamespace('team-b'));
    const run = await gateway([
      '--services',
      services,
      '--port',
      '0',
      '--admin-port',
      '0',
      '--host',
      '127.0.0.1',
      '--data',
      data,
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /service agent\.team-b has the name of service agent\.team-a \(.*a\.yaml document 1\)/);
    assert.doesNotMatch(run.stdout + run.stderr, /gateway listening/);
  });
});
