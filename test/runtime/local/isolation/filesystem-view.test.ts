import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bwrapArgs,
  commandFiles,
  isInside,
  TOKEN_DIR,
  type ViewSpec,
  WORK_DIR,
} from '../../../../src/runtime/local/isolation/filesystem-view.ts';

const view: ViewSpec = {
  hostname: 'svc-abcde',
  system: [{ path: '/usr' }, { path: '/bin', link: 'usr/bin' }, { path: '/etc' }],
  readOnly: ['/repo/examples/app', '/repo'],
  masks: [
    { path: '/repo/.tether', kind: 'dir' },
    { path: '/repo/secret.key', kind: 'file' },
  ],
  workDir: '/sbx/tth0001/work',
  tokenDir: '/sbx/tth0001/token',
  workingDir: '/repo/examples/app',
  unshareNet: false,
};

/** The index of the first `--flag a b` triple. */
function at(args: string[], ...seq: string[]): number {
  for (let i = 0; i <= args.length - seq.length; i++) if (seq.every((s, j) => args[i + j] === s)) return i;
  return -1;
}

describe('bwrapArgs()', () => {
  it('unshares user, IPC, PID and UTS namespaces and names the host after the instance', () => {
    const a = bwrapArgs(view);
    for (const ns of ['--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-uts'])
      assert.ok(a.includes(ns), ns);
    assert.ok(at(a, '--hostname', 'svc-abcde') >= 0);
    assert.ok(!a.includes('--unshare-net'), 'the runtime gave it a network namespace already');
    assert.ok(bwrapArgs({ ...view, unshareNet: true }).includes('--unshare-net'));
  });

  it('shows the system read-only, a fresh /proc and a private /tmp, and the work and token folders', () => {
    const a = bwrapArgs(view);
    assert.ok(at(a, '--ro-bind', '/usr', '/usr') >= 0);
    assert.ok(at(a, '--symlink', 'usr/bin', '/bin') >= 0);
    assert.ok(at(a, '--proc', '/proc') >= 0);
    assert.ok(at(a, '--tmpfs', '/tmp') >= 0);
    assert.ok(at(a, '--bind', '/sbx/tth0001/work', WORK_DIR) >= 0);
    assert.ok(at(a, '--ro-bind', '/sbx/tth0001/token', TOKEN_DIR) >= 0);
    assert.ok(at(a, '--chdir', '/repo/examples/app') >= 0);
  });

  it('mounts parents before children, and masks after everything they hide', () => {
    const a = bwrapArgs(view);
    const parent = at(a, '--ro-bind', '/repo', '/repo');
    const child = at(a, '--ro-bind', '/repo/examples/app', '/repo/examples/app');
    assert.ok(parent >= 0 && parent < child);
    const mask = at(a, '--tmpfs', '/repo/.tether', '--remount-ro', '/repo/.tether');
    assert.ok(mask > child);
    assert.ok(at(a, '--ro-bind', '/dev/null', '/repo/secret.key') > parent);
  });
});

describe('commandFiles()', () => {
  it('finds the files a command names, relative to workingDir, skipping flags and words', () => {
    const exists = (p: string) => ['/repo/examples/memory-agent/server.ts', '/opt/bin/app'].includes(p);
    assert.deepEqual(
      commandFiles(['node', '--import', 'tsx', '../memory-agent/server.ts'], '/repo/examples/platform', exists),
      ['/repo/examples/memory-agent/server.ts'],
    );
    assert.deepEqual(commandFiles(['/opt/bin/app', '--port=1', 'serve'], '/w', exists), ['/opt/bin/app']);
    assert.deepEqual(commandFiles(['node', 'missing.js'], '/w', exists), []);
  });
});

describe('isInside()', () => {
  it('is true for the folder itself and what lies below it, not for a sibling with the same prefix', () => {
    assert.ok(isInside('/repo/.tether', '/repo'));
    assert.ok(isInside('/repo', '/repo'));
    assert.ok(!isInside('/repository', '/repo'));
  });
});
