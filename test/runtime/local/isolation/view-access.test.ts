import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  allows,
  blockedAbove,
  outermost,
  type PathStat,
  reachableWithin,
  unusable,
} from '../../../../src/runtime/local/isolation/view-access.ts';
import { ask, isolatedRuntime, openTempDir, PROBE, probeSpec } from './helpers.ts';

/** A fake filesystem: path -> [mode, owner uid, owner gid, is a folder]. */
function fakeStat(tree: Record<string, [number, number, number, boolean]>) {
  return (p: string): PathStat => {
    const e = tree[p];
    if (!e) throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
    return { mode: e[0], uid: e[1], gid: e[2], isDirectory: () => e[3] };
  };
}

const stat = fakeStat({
  '/': [0o755, 0, 0, true],
  '/root': [0o700, 0, 0, true],
  '/root/tether': [0o755, 0, 0, true],
  '/root/tether/app': [0o755, 0, 0, true],
  '/root/tether/app/.tether': [0o700, 0, 0, true],
  '/root/tether/private': [0o700, 0, 0, true],
  '/root/tether/private/.tether': [0o700, 0, 0, true],
  '/root/tether/secret.txt': [0o600, 0, 0, false],
  '/home': [0o755, 0, 0, true],
  '/home/alice': [0o750, 1000, 1000, true],
});
const instance = { uid: 100_123, gids: [100_123] };

describe('view-access: what an instance uid can reach', () => {
  it('allows by owner, then group, then other bits; uid 0 reaches everything', () => {
    const alice = stat('/home/alice');
    assert.equal(allows(alice, { uid: 1000, gids: [] }, 1), true);
    assert.equal(allows(alice, { uid: 5, gids: [1000] }, 1), true);
    assert.equal(allows(alice, { uid: 5, gids: [5] }, 1), false);
    assert.equal(allows(stat('/root'), { uid: 0, gids: [] }, 1), true);
  });

  it('finds the parent folder it cannot enter (a checkout in root’s 0700 home)', () => {
    assert.equal(blockedAbove('/root/tether/app', instance, stat), '/root');
    assert.equal(blockedAbove('/home/alice', instance, stat), undefined);
    assert.equal(blockedAbove('/root/tether/app', { uid: 0, gids: [] }, stat), undefined);
  });

  it('says why a folder or file cannot be used itself, with its mode and owner', () => {
    assert.equal(unusable('/root/tether/app', instance, stat), undefined);
    assert.equal(unusable('/root', instance, stat), 'uid 100123 cannot enter /root (mode 0700, owner uid 0)');
    assert.equal(
      unusable('/root/tether/secret.txt', instance, stat),
      'uid 100123 cannot read /root/tether/secret.txt (mode 0600, owner uid 0)',
    );
  });

  it('reaches a hidden folder only through folders it may enter below the shown one', () => {
    assert.equal(reachableWithin('/root/tether/app/.tether', '/root/tether', instance, stat), true);
    assert.equal(reachableWithin('/root/tether/private/.tether', '/root/tether', instance, stat), false);
  });

  it('keeps only the outermost of nested paths', () => {
    assert.deepEqual(outermost(['/repo/examples/app', '/repo', '/other', '/repo', '/repository']), [
      '/repo',
      '/other',
      '/repository',
    ]);
  });
});

type Read = { ok: boolean; error?: string; bytes?: number };

describe('an isolated instance whose workingDir holds the masked data folder', () => {
  it('starts from a checkout under a folder its uid cannot enter (0700 home), the data folder still hidden', async (t) => {
    const home = await openTempDir(t, 'tether-home-');
    chmodSync(home, 0o700);
    const checkout = join(home, 'checkout');
    mkdirSync(checkout, { mode: 0o755 });
    copyFileSync(PROBE, join(checkout, 'app.mjs'));
    writeFileSync(join(checkout, 'visible.txt'), 'visible');
    const data = join(checkout, '.tether');
    mkdirSync(join(data, 'memory'), { recursive: true, mode: 0o700 });
    writeFileSync(join(data, 'memory', 'admin.key'), 'tth_admin', { mode: 0o600 });
    mkdirSync(join(checkout, 'private'), { mode: 0o700 });
    const hiddenBehindPrivate = join(checkout, 'private', 'data');
    mkdirSync(hiddenBehindPrivate);

    const rt = await isolatedRuntime(t, { hidden: [data, hiddenBehindPrivate] });
    const spec = probeSpec({ workingDir: checkout, argv: ['node', 'app.mjs'] });
    const inst = await rt.start(spec);
    const read = (p: string) => ask<Read>(inst, `/read?path=${encodeURIComponent(p)}`);
    assert.equal((await read(join(checkout, 'visible.txt'))).ok, true);
    assert.deepEqual(await read(join(data, 'memory', 'admin.key')), { ok: false, error: 'ENOENT' });
    assert.deepEqual(await ask(inst, `/list?path=${encodeURIComponent(data)}`), { ok: true, entries: [] });
    assert.deepEqual(await ask(inst, `/list?path=${encodeURIComponent(join(checkout, 'private'))}`), {
      ok: false,
      error: 'EACCES',
    });
  });

  it('refuses a workingDir its uid cannot enter itself, naming the folder, its mode and what to do', async (t) => {
    const home = await openTempDir(t, 'tether-home-');
    chmodSync(home, 0o700);
    mkdirSync(join(home, '.tether'));
    const rt = await isolatedRuntime(t, { hidden: [join(home, '.tether')] });
    await assert.rejects(
      rt.start(probeSpec({ workingDir: home })),
      (err: Error) =>
        err.message.includes(`cannot be shown ${home}`) &&
        /cannot enter .* \(mode 0700, owner uid 0\); let others in \(chmod o\+x/.test(err.message),
    );
  });
});
