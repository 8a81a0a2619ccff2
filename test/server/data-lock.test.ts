/**
 * One memory server per data folder (src/server/data-lock.ts), with real files and processes: a second
 * lock on a held folder is refused naming the holder, a pid file left by a process that is gone is
 * taken over, a running foreign process keeps it, and release frees the folder.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { lockDataDir } from '../../src/server/data-lock.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

const root = mkdtempSync(join(tmpdir(), 'tether-data-lock-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('lockDataDir', () => {
  it('refuses a folder this process holds, and frees it on release', () => {
    const dir = join(root, 'held');
    const lock = lockDataDir(dir);
    assert.ok(lock);
    assert.equal(readFileSync(lock.path, 'utf8').trim(), String(process.pid));
    assert.throws(() => lockDataDir(dir), new RegExp(`another memory server \\(pid ${process.pid}\\)`));
    lock.release();
    assert.equal(existsSync(lock.path), false);
    lockDataDir(dir)?.release();
  });

  it('takes over the pid file of a process that is gone', () => {
    const dir = join(root, 'stale');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    lockDataDir(dir)?.release();
    writeFileSync(join(dir, 'server.pid'), `${gone}\n`);
    const lock = lockDataDir(dir);
    assert.equal(readFileSync(join(dir, 'server.pid'), 'utf8').trim(), String(process.pid));
    lock?.release();
  });

  it('leaves the folder to another running process', async (t) => {
    const dir = join(root, 'foreign');
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    t.after(() => other.kill('SIGKILL'));
    lockDataDir(dir)?.release();
    writeFileSync(join(dir, 'server.pid'), `${other.pid}\n`);
    assert.throws(() => lockDataDir(dir), new RegExp(`pid ${other.pid}\\).*remove ${join(dir, 'server.pid')}`));
  });

  it('keeps a second memory server off a folder in use, and lets it start once the first closed', async () => {
    const first = await startTestMemoryServer();
    await assert.rejects(startTestMemoryServer({ dataDir: first.dataDir }), /another memory server/);
    await first.close(true);
    const second = await startTestMemoryServer({ dataDir: first.dataDir });
    await second.close();
    rmSync(first.dataDir, { recursive: true, force: true });
  });
});
