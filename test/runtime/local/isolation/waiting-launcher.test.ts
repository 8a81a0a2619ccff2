import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findTool } from '../../../../src/runtime/local/isolation/host-probe.ts';
import { WaitingLauncher } from '../../../../src/runtime/local/isolation/waiting-launcher.ts';
import { waitFor } from '../../../gateway/helpers/harness.ts';
import { openTempDir } from './helpers.ts';

const tools = { bash: findTool('bash') as string, env: findTool('env') as string };
const sh = findTool('sh') as string;

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((ok) => child.once('exit', (code) => ok(code)));
}

/** Waits (bounded) until `file` holds a line. */
async function firstLine(file: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const text = readFileSync(file, 'utf8');
    if (text.includes('\n')) return text.split('\n')[0] as string;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${file} stayed empty`);
}

describe('WaitingLauncher', () => {
  it('joins its files before waiting, then becomes the command: same pid, its cwd, output appended', async (t) => {
    const dir = await openTempDir(t, 'tether-launcher-');
    // Plain files stand in for cgroup.procs: a join is the launcher writing its pid there.
    const joins = [join(dir, 'a.procs'), join(dir, 'b.procs')];
    const later = join(dir, 'cpu.procs');
    for (const f of [...joins, later]) writeFileSync(f, '');
    const out = join(dir, 'out');
    const err = join(dir, 'err');
    writeFileSync(out, 'before\n');
    writeFileSync(err, '');
    const launcher = WaitingLauncher.spawn(tools, joins);
    const pid = Number(await firstLine(joins[1] as string));
    assert.equal(Number(readFileSync(joins[0] as string, 'utf8')), pid, 'joined both, in its own process');
    assert.equal(readFileSync(later, 'utf8'), '', 'nothing joined that it was not given yet');
    assert.ok(launcher.alive);
    const script = `echo "pid=$$ cwd=$(pwd) a=$A joined=$(cat ${later})"; echo oops >&2`;
    const child = launcher.start({ file: sh, args: ['-c', script], env: { A: '1' }, cwd: dir }, { out, err }, [later]);
    assert.equal(launcher.alive, false, 'used once');
    assert.equal(await exited(child), 0);
    assert.equal(child.pid, pid, 'the waiting process became the command');
    assert.equal(Number(readFileSync(later, 'utf8')), pid, 'the extra file joined before the command ran');
    // joined=: the command itself read its pid in the extra file, so that join came before it ran.
    assert.equal(readFileSync(out, 'utf8'), `before\npid=${pid} cwd=${dir} a=1 joined=${pid}\n`, 'appended');
    assert.equal(readFileSync(err, 'utf8'), 'oops\n');
  });

  it('gives the command exactly the environment of the plan, and no value is ever in an argv', async (t) => {
    const dir = await openTempDir(t, 'tether-launcher-');
    const procs = join(dir, 'procs');
    const out = join(dir, 'out');
    const argvLog = join(dir, 'env-argv');
    writeFileSync(procs, '');
    writeFileSync(out, '');
    // An env that records the words it was given (its argv), then is the real env.
    const envStub = join(dir, 'env-stub');
    writeFileSync(envStub, `#!${sh}\nprintf '%s\\n' "$@" > ${argvLog}\nexec ${tools.env} "$@"\n`, { mode: 0o755 });
    const launcher = WaitingLauncher.spawn({ ...tools, env: envStub }, [procs]);
    const env = { API_TOKEN: 'hunter2', B: 'two\nlines', C: 'a=b', D: '', PATH: '/usr/bin:/bin' };
    assert.ok(WaitingLauncher.accepts(env));
    const child = launcher.start({ file: tools.env, args: ['-0'], env, cwd: dir }, { out, err: out });
    assert.equal(await exited(child), 0);
    const seen = readFileSync(out, 'utf8').split('\0').filter(Boolean).sort();
    assert.deepEqual(seen, ['API_TOKEN=hunter2', 'B=two\nlines', 'C=a=b', 'D=', 'PATH=/usr/bin:/bin']);
    const argv = readFileSync(argvLog, 'utf8');
    assert.doesNotMatch(argv, /hunter2/, `a value in an argv: ${argv}`);
    assert.match(argv, /^-uSHLVL$/m, 'what bash adds is dropped');
  });

  it('accepts only names bash exports as given (the runtime launches the others with sh)', () => {
    assert.ok(WaitingLauncher.accepts({ A: '1', _under: 'x', K_SERVICE: 'svc', PWD: '/x' }));
    for (const name of ['WITH SPACE', '1X', 'A-B', '', 'UID', 'SHELLOPTS', 'BASH_ENV', 'RANDOM', '_', '__tl_a']) {
      assert.equal(WaitingLauncher.accepts({ [name]: 'v' }), false, name);
    }
  });

  it('runs nothing when a join at start fails (exit 125)', async (t) => {
    const dir = await openTempDir(t, 'tether-launcher-');
    const procs = join(dir, 'procs');
    const out = join(dir, 'out');
    writeFileSync(procs, '');
    writeFileSync(out, '');
    const launcher = WaitingLauncher.spawn(tools, [procs]);
    const child = launcher.start({ file: sh, args: ['-c', 'echo ran'], env: {}, cwd: dir }, { out, err: out }, [
      join(dir, 'missing', 'cgroup.procs'),
    ]);
    assert.equal(await exited(child), 125);
    assert.doesNotMatch(readFileSync(out, 'utf8'), /ran/);
    assert.match(readFileSync(out, 'utf8'), /missing/, 'the failure is in its output file');
  });

  it('cannot be started once cancelled', async (t) => {
    const dir = await openTempDir(t, 'tether-launcher-');
    const procs = join(dir, 'procs');
    writeFileSync(procs, '');
    const launcher = WaitingLauncher.spawn(tools, [procs]);
    await firstLine(procs);
    launcher.cancel();
    assert.equal(launcher.alive, false);
    assert.throws(
      () => launcher.start({ file: sh, args: [], env: {}, cwd: dir }, { out: procs, err: procs }),
      /waiting launcher is gone/,
    );
  });

  it('is not alive once it died, and refuses a word holding a NUL byte without using itself up', async (t) => {
    const dir = await openTempDir(t, 'tether-launcher-');
    const launcher = WaitingLauncher.spawn(tools, [join(dir, 'missing-folder', 'procs')]);
    await waitFor('the launcher to exit', () => !launcher.alive);
    assert.equal(launcher.alive, false, 'a launcher that could not join exits at once (125)');

    const procs = join(dir, 'procs');
    writeFileSync(procs, '');
    const other = WaitingLauncher.spawn(tools, [procs]);
    await firstLine(procs);
    const plan = { file: sh, args: ['-c', 'exit 0'], env: { A: 'x\0y' }, cwd: dir };
    assert.throws(() => other.start(plan, { out: procs, err: procs }), /NUL byte/);
    assert.ok(other.alive, 'still usable');
    other.cancel();
  });
});
