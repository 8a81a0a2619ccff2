/**
 * `tether gateway` as run from the command line (bin/tether): what it refuses before serving, and the exit
 * code it refuses with (docs/cli.md's exit-code table).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { serviceYaml } from '../gateway/helpers/harness.ts';
import { runTether } from '../helpers/tether-cli.ts';

const EXAMPLES = new URL('../../examples/services', import.meta.url).pathname;
const gateway = (args: string[]) => runTether(['gateway', ...args]);

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tether-cli-gateway-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('tether gateway', () => {
  it('exits 1 (a manifest error, as any other) naming both services when one service name is in two namespaces', async () => {
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
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /service agent\.team-b has the name of service agent\.team-a \(.*a\.yaml document 1\)/);
    assert.doesNotMatch(run.stdout + run.stderr, /gateway listening/);
  });

  for (const [flag, value, names] of [
    ['--port', 'abc', /--port: must be a port number \(0-65535\), got 'abc'/],
    ['--admin-port', '70000', /--admin-port: must be a port number/],
    ['--queue-timeout', 'xyz', /--queue-timeout: .*xyz/],
    ['--max-instances', '0', /--max-instances: must be a positive integer, got '0'/],
    ['--new-sessions-per-minute', '-1', /--new-sessions-per-minute: must be an integer >= 0/],
    ['--address-share', '0', /--address-share: must be a whole percentage 1-100, got '0'/],
    ['--runtime', 'foo', /--runtime: must be 'local' or 'kubernetes', got 'foo'/],
    ['--isolation', 'sometimes', /--isolation must be one of auto, namespaces, none/],
    ['--session-store', 'disk', /--session-store: must be 'memory' or 'redis'/],
    [
      '--redis-url',
      'redis://u:secret%zzpw@127.0.0.1:6379/0',
      /^tether: --redis-url: the password of 127\.0\.0\.1:6379 is not valid percent-encoding/m,
    ],
  ] as const) {
    it(`exits 2 on ${flag} ${value} before writing anything into --data`, async () => {
      const data = join(dir, `data${flag}`);
      const store = flag === '--redis-url' ? ['--session-store', 'redis'] : [];
      const run = await gateway(['--services', EXAMPLES, ...store, flag, value, '--data', data]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, names);
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(run.stderr, /secret/, 'no password');
      assert.equal(existsSync(data), false, 'no claim.secret or session.secret written');
    });
  }
});
