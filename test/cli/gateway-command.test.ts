/**
 * `tether gateway` as run from the command line (bin/tether): what it refuses before serving, and the exit
 * code it refuses with (README's exit-code table).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serviceYaml } from '../gateway/helpers/harness.ts';
import { runTether } from '../helpers/tether-cli.ts';

const gateway = (args: string[]) => runTether(['gateway', ...args]);

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
