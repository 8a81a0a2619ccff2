import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const run = promisify(execFile);
const BIN = new URL('../../bin/tether', import.meta.url).pathname;

let srv: TestMemoryServer;
let dir: string;
before(async () => {
  srv = await startTestMemoryServer();
  dir = mkdtempSync(join(tmpdir(), 'tether-cli-'));
});
after(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('tether export / tether import', () => {
  it('round-trips a namespace through a file, with progress on stderr', async () => {
    const key = await srv.agentKey('agents', 'cli');
    const statements = Array.from({ length: 300 }, (_, i) => ({
      subject: `s${i}`,
      predicate: 'note',
      value: `fact ${i} ${'x'.repeat(3000)}`,
    }));
    const w = await srv.call('POST', '/v1/memories', { key, body: { statements } });
    assert.equal(w.status, 200);

    const exported = await run(process.execPath, [BIN, 'export', '--url', srv.url, '--key', key], {
      maxBuffer: 64 << 20,
    });
    const lines = exported.stdout.trim().split('\n');
    assert.equal(lines.length, 301); // the tenant's registry version, then its events
    assert.ok(lines[0]?.startsWith('{"registry_version"'));
    // stderr is not a terminal: no progress line for quick work, then one summary line.
    assert.match(exported.stderr, /^exported 300 events in \d+\.\d s\n$/);
    const file = join(dir, 'cli.ndjson');
    writeFileSync(file, exported.stdout);

    await srv.call('DELETE', '/v1/namespaces/agents:cli', { key: srv.adminKey });
    // ~1 MB of lines: the CLI must split it under the server's 1 MiB body limit
    const imported = await run(process.execPath, [BIN, 'import', file, '--url', srv.url, '--key', srv.adminKey]);
    assert.match(imported.stderr, /^imported 300 events, skipped 0 already present, in \d+\.\d s\n$/);
    const after = await srv.call('GET', '/v1/events', { key });
    assert.equal(after.text, readFileSync(file, 'utf8'));
  });

  it('fails with the server’s error and exit code 3 for a bad key', async () => {
    await assert.rejects(
      run(process.execPath, [BIN, 'export', '--url', srv.url, '--key', 'nope']),
      (err: { code: number; stderr: string }) => err.code === 3 && /401 unauthenticated/.test(err.stderr),
    );
  });
});
