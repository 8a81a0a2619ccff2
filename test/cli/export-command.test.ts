import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { execTether } from '../helpers/tether-cli.ts';

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

    const exported = await execTether(['export', '--url', srv.url, '--key', key], {
      maxBuffer: 64 << 20,
    });
    const lines = exported.stdout.trim().split('\n');
    assert.equal(lines.length, 301); // the tenant's registry version, then its events
    assert.ok(lines[0]?.startsWith('{"registry_version"'));
    // stderr is not a terminal: plain progress lines (one every 2 s, so none when the machine is quick: how
    // many depends on its load), then one summary line.
    assert.match(exported.stderr, /^(export \[[#-]+\] .*\n)*exported 300 events in \d+\.\d s\n$/);
    const file = join(dir, 'cli.ndjson');
    writeFileSync(file, exported.stdout);

    await srv.call('DELETE', '/v1/namespaces/agents:cli', { key: srv.adminKey });
    // ~1 MB of lines: the CLI must split it under the server's 1 MiB body limit
    const imported = await execTether(['import', file, '--url', srv.url, '--key', srv.adminKey]);
    assert.match(
      imported.stderr,
      /^(import \[[#-]+\] .*\n)*imported 300 events, skipped 0 already present, in \d+\.\d s\n$/,
    );
    const after = await srv.call('GET', '/v1/events', { key });
    assert.equal(after.text, readFileSync(file, 'utf8'));
  });

  it('refuses an import holding U+0000, naming the line of the file (not of the batch)', async () => {
    const key = await srv.agentKey('agents', 'nul');
    const statements = Array.from({ length: 300 }, (_, i) => ({
      subject: `s${i}`,
      predicate: 'note',
      value: `fact ${i} ${'x'.repeat(3000)}`,
    }));
    assert.equal((await srv.call('POST', '/v1/memories', { key, body: { statements } })).status, 200);
    const exported = await execTether(['export', '--url', srv.url, '--key', key], {
      maxBuffer: 64 << 20,
    });
    const lines = exported.stdout.trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1] as string);
    // ~1 MB before it: the bad line goes in the second batch, as its line 2 or so; in the file it is 303.
    const bad = { ...last, id: 'ev_01a232f3c3600000002ac07d99', evidence: 'pasted\u0000junk' };
    const file = join(dir, 'nul.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n\n${JSON.stringify(bad)}\n`);
    await assert.rejects(
      execTether(['import', file, '--url', srv.url, '--key', srv.adminKey]),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1, err.stderr);
        assert.match(err.stderr, /400 invalid_request: line 303\.evidence: contains U\+0000 \(NUL\)/);
        assert.match(err.stderr, /\(0 events imported and \d+ skipped before it\)/);
        return true;
      },
    );
  });

  it('fails with the server’s error and exit code 3 for a bad key', async () => {
    await assert.rejects(
      execTether(['export', '--url', srv.url, '--key', 'nope']),
      (err: { code: number; stderr: string }) => err.code === 3 && /401 unauthenticated/.test(err.stderr),
    );
  });
});
