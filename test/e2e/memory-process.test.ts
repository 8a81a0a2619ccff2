import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { spawnTether } from '../helpers/tether-cli.ts';

/** Starts `tether memory` and resolves with its URL once it prints it. */
function startProcess(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const child = spawnTether(['memory', '--port', '0', '--data', dataDir], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    // A generous bound against a hang, not a start-time race (a start under load takes seconds).
    const timer = setTimeout(() => reject(new Error(`no URL printed:\n${out}`)), 120_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] as string, out: () => out });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}`)));
  });
}

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('tether memory (process)', () => {
  it('writes a 0600 admin key file, never logs the key, and stops on SIGTERM after in-flight requests', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tether-e2e-'));
    dirs.push(dataDir);
    const { child, url, out } = await startProcess(dataDir);
    const keyFile = join(dataDir, 'admin.key');
    assert.ok(existsSync(keyFile));
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    const adminKey = readFileSync(keyFile, 'utf8').trim();
    assert.ok(!out().includes(adminKey.slice(21)), 'the key secret must not be logged');
    assert.match(out(), /admin key: .*admin\.key/);
    assert.match(out(), /web console +http:\/\/\S+\/console\//);

    const minted = await fetch(`${url}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 'agents', agent: 'p' }),
    });
    const { key } = (await minted.json()) as { key: string };
    const writes = Array.from({ length: 20 }, (_, i) =>
      fetch(`${url}/v1/memories`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subject: `s${i}`, predicate: 'note', value: `v${i}` }),
      }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() })),
    );
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await new Promise((r) => setTimeout(r, 5));
    const sentAt = Date.now();
    child.kill('SIGTERM');
    const statuses = await Promise.allSettled(writes);
    const code = await exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - sentAt < 10_000);
    // every request either finished or was never accepted; none failed half-way with a 500
    for (const s of statuses) {
      if (s.status === 'rejected') {
        // Only at the connection level: refused once the listener closed, or reset when the client
        // reused a keep-alive socket the server was closing as idle. Such a request was never
        // processed: the count of stored events below equals the count of 200s.
        const cause = (s.reason as { cause?: { code?: string } }).cause?.code;
        assert.ok(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(cause ?? ''), String(cause));
      } else if (s.value.status !== 200) {
        assert.equal(s.value.status, 503, s.value.body);
        assert.equal(JSON.parse(s.value.body).error.code, 'unavailable');
        assert.ok(Number(s.value.retryAfter) >= 1);
      }
    }

    const again = await startProcess(dataDir);
    try {
      const stored = statuses.filter((s) => s.status === 'fulfilled' && s.value.status === 200).length;
      const exp = await fetch(`${again.url}/v1/events`, { headers: { authorization: `Bearer ${key}` } });
      // events only: the export also carries the tenant's registry version before its first event
      const lines = (await exp.text())
        .trim()
        .split('\n')
        .filter((l) => l && !l.startsWith('{"registry_version"'));
      assert.equal(lines.length, stored);
    } finally {
      again.child.kill('SIGTERM');
      await new Promise((r) => again.child.once('exit', r));
    }
  });

  it('takes the admin key from TETHER_ADMIN_KEY and writes no key file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tether-e2e-'));
    dirs.push(dataDir);
    const adminKey = `tth_${'1'.repeat(16)}_${'2'.repeat(64)}`;
    const { child, url } = await startProcess(dataDir, { TETHER_ADMIN_KEY: adminKey });
    try {
      const r = await fetch(`${url}/v1/whoami`, { headers: { authorization: `Bearer ${adminKey}` } });
      assert.equal(r.status, 200);
      assert.equal(((await r.json()) as { tenant: string }).tenant, '*');
      assert.ok(!existsSync(join(dataDir, 'admin.key')));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
