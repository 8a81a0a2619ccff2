import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqlite } from '../../src/cli/drivers.ts';
import { randomHex } from '../../src/common/ids.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { startMemoryServer } from '../../src/server/standalone.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-modes-'));
after(() => rmSync(root, { recursive: true, force: true }));

const mode = (p: string) => statSync(p).mode & 0o777;

async function runOnce(dataDir: string) {
  const server = await startMemoryServer({
    ...openSqlite(dataDir),
    port: 0,
    dataDir,
    defaultRegistry: starterRegistry('personal'),
    log: silentLogger(),
  });
  try {
    const key = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const r = await fetch(`${server.url}/v1/memories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: 'a:b', subject: 's', predicate: 'note', value: 'v' }),
    });
    assert.equal(r.status, 200);
    // while the server runs: the WAL and its index exist
    for (const f of ['tether.db', 'tether.db-wal', 'tether.db-shm', 'admin.key'])
      assert.equal(mode(join(dataDir, f)), 0o600, f);
  } finally {
    await server.close();
  }
}

describe('data folder and file modes, whatever the umask', () => {
  it('makes the folder 0700 and the database, WAL, index and key files 0600 under umask 000', async () => {
    const old = process.umask(0);
    try {
      const dir = join(root, 'fresh');
      await runOnce(dir);
      assert.equal(mode(dir), 0o700);
    } finally {
      process.umask(old);
    }
  });

  it('narrows a folder and files that existed with wider modes', async () => {
    const old = process.umask(0);
    try {
      const dir = join(root, 'existing');
      mkdirSync(dir, { mode: 0o755 });
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'admin.key'), `tth_${randomHex(8)}_${randomHex(32)}\n`, { mode: 0o644 });
      await runOnce(dir);
      assert.equal(mode(dir), 0o700);
      chmodSync(join(dir, 'tether.db'), 0o644);
      await runOnce(dir);
      assert.equal(mode(join(dir, 'tether.db')), 0o600);
    } finally {
      process.umask(old);
    }
  });
});
