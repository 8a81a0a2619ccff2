/**
 * `npm start` (package.json: `exec node bin/tether up`) stopped by a signal sent to the npm process alone, as a
 * process manager or `kill <npm pid>` does: the whole platform stops and nothing is left behind — not the
 * `tether up` process (before `exec`, sh died and it was re-parented to PID 1, still serving), not an instance
 * (a paused warm one included), not an instance's cgroup or named network namespace.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type AdminInstance, isGone, send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { fromSource } from '../helpers/tether-cli.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** Pids of the children of `pid` (every thread's list), and theirs, depth first. */
function descendantsOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks
    .flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean))
    .map(Number)
    .flatMap((child) => [child, ...descendantsOf(child)]);
}

/** The cgroup v2 (or first v1) path of a process, under /sys/fs/cgroup. */
function cgroupDirs(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(':'))
    .map(([, controllers, path]) =>
      controllers
        ? join('/sys/fs/cgroup', controllers.split(',')[0] as string, path as string)
        : join('/sys/fs/cgroup', path as string),
    )
    .filter((d) => existsSync(d));
}

/** Inode of a process's network namespace. */
const netnsOf = (pid: number) => statSync(`/proc/${pid}/ns/net`).ino;

const CASES = [
  { signal: 'SIGTERM', group: false, what: 'SIGTERM to npm' },
  { signal: 'SIGINT', group: false, what: 'SIGINT to npm' },
  // Ctrl-C in a terminal: the whole foreground group gets SIGINT, and npm forwards one more to its child.
  { signal: 'SIGINT', group: true, what: "SIGINT to npm's process group (Ctrl-C)" },
] as const;

for (const { signal, group, what } of CASES) {
  describe(`npm start, ${what}`, () => {
    it('stops the whole platform and leaves no process, cgroup or namespace behind', async (t) => {
      const data = await mkdtemp(join(tmpdir(), 'tether-npm-start-'));
      t.after(() => rm(data, { recursive: true, force: true }));
      // One paused warm instance: a stopped process is the one most easily left behind.
      const manifest = await writeManifest(t, serviceYaml('app', { 'serving.knative.dev/warm-pool': '1' }));
      // The instance runs in the manifest's folder: under --isolation namespaces as its own uid, which mkdtemp's 0700 shuts out.
      chmodSync(dirname(manifest), 0o755);
      const npm = spawn(
        'npm',
        [
          'start',
          '--',
          '--data',
          data,
          '--services',
          manifest,
          '--memory-port',
          '0',
          '--port',
          '0',
          '--admin-port',
          '0',
        ],
        // fromSource(): `npm start` runs bin/tether, which must not run a dist/ left stale by an edit of src/.
        { cwd: ROOT, env: fromSource(), stdio: ['ignore', 'pipe', 'pipe'], detached: group },
      );
      let out = '';
      npm.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      npm.stderr.on('data', (c: Buffer) => {
        out += c.toString();
      });
      const closed = once(npm, 'close');
      t.after(() => {
        if (npm.exitCode === null) npm.kill('SIGKILL');
      });
      // Generous: a start under load is slow, and the start is not what is tested.
      await waitFor('the "Tether is up." banner', () => out.includes('Tether is up.') || npm.exitCode !== null, {
        timeoutMs: 120_000,
      });
      const up = descendantsOf(npm.pid as number).find((pid) =>
        /bin\/tether\0up\0/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')),
      );
      assert.ok(up, `npm runs tether up:\n${out}`);
      t.after(() => {
        if (!isGone(up)) process.kill(up, 'SIGKILL');
      });
      const admin = /admin (http:\/\/\S+)\/_tether/.exec(out)?.[1];
      assert.ok(admin, out);
      const token = readFileSync(join(data, 'gateway', 'admin.token'), 'utf8').trim();
      const listed = await waitFor(
        'the warm instance',
        async () => {
          const r = await send(admin, { path: '/_tether/instances', headers: { authorization: `Bearer ${token}` } });
          const all = JSON.parse(r.body) as AdminInstance[];
          return all.some((i) => i.pid !== null && i.state === 'paused') ? all : null;
        },
        // Generous: an instance's start under load is slow too.
        { timeoutMs: 120_000 },
      );
      const pids = listed.map((i) => i.pid).filter((p): p is number => p !== null);
      const ownCgroups = new Set(cgroupDirs(up));
      const cgroups = pids.flatMap(cgroupDirs).filter((d) => !ownCgroups.has(d));
      const namespaces = new Set(pids.map(netnsOf).filter((ino) => ino !== netnsOf(up)));

      if (group) process.kill(-(npm.pid as number), signal);
      else npm.kill(signal);
      // 'close' comes once every holder of npm's stdout and stderr is gone: npm, tether up, the instances.
      const waited = new AbortController();
      const outcome = await Promise.race([
        closed.then(() => 'closed'),
        delay(60_000, 'still open', { signal: waited.signal }),
      ]);
      waited.abort();
      assert.equal(outcome, 'closed', `something still holds npm's output 60 s after ${what}`);
      assert.ok(isGone(up), `tether up (pid ${up}) left running:\n${out.slice(-2000)}`);
      for (const pid of pids) assert.ok(isGone(pid), `instance pid ${pid} left behind`);
      for (const dir of cgroups) assert.ok(!existsSync(dir), `cgroup ${dir} left behind`);
      const named = existsSync('/run/netns')
        ? readdirSync('/run/netns').map((n) => statSync(`/run/netns/${n}`).ino)
        : [];
      for (const ino of named) assert.ok(!namespaces.has(ino), `network namespace ${ino} left behind`);
      assert.match(out, /"msg":"stopped"/, 'tether up stopped gracefully');
    });
  });
}
