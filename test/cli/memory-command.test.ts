/**
 * `tether memory` as run from the command line (bin/tether): a bad flag value is a usage error (exit 2, the
 * docs/cli.md's exit-code table) found before the store is opened, so nothing is written into --data.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runTether } from '../helpers/tether-cli.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tether-cli-memory-'));
});
after(() => rm(dir, { recursive: true, force: true }));

describe('tether memory', () => {
  for (const [flag, value, names] of [
    ['--port', 'abc', /--port: must be a port number \(0-65535\), got 'abc'/],
    ['--key-rate-limit', 'lots', /--key-rate-limit: must be an integer >= 0, got 'lots'/],
    ['--key-cache-ttl', 'xyz', /--key-cache-ttl: .*xyz/],
    ['--registry', 'no-such-registry', /--registry: 'no-such-registry' is neither a starter registry/],
  ] as const) {
    it(`exits 2 on ${flag} ${value} before opening the store`, async () => {
      const data = join(dir, `data${flag}`);
      const run = await runTether(['memory', '--port', '0', flag, value, '--data', data]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, names);
      assert.equal(existsSync(data), false, 'nothing written into --data');
    });
  }
});
