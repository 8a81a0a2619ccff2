import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { silentLogger } from '../../src/common/log.ts';
import { LocalRuntime } from '../../src/runtime/local/local-runtime.ts';
import { reapOrphans } from '../../src/runtime/local/orphans.ts';
import type { InstanceSpec } from '../../src/runtime/runtime.ts';
import { APP, isGone, procState, waitFor } from '../gateway/helpers/harness.ts';

function spec(over: Partial<InstanceSpec> = {}): InstanceSpec {
  return {
    name: `svc-${Math.random().toString(36).slice(2, 7)}`,
    service: 'svc',
    configuration: 'svc',
    revision: 'svc-00001',
    argv: ['node', APP],
    env: { GREETING: 'hi' },
    workingDir: resolve(import.meta.dirname),
    startTimeoutMs: 10_000,
    ...over,
  };
}

function getJson(port: number, path: string): Promise<Record<string, unknown>> {
  return new Promise((ok, fail) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => ok(JSON.parse(body)));
    })
      .on('error', fail)
      .end();
  });
}

/** pgid field of /proc/<pid>/stat. */
function pgid(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('LocalRuntime', () => {
  it('starts the command itself (pid is the app), in its own process group, with PORT and K_* set', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000 });
    t.after(() => rt.close());
    const s = spec();
    const started = await rt.start(s);
    assert.ok(started.pid);
    const info = await getJson(started.port, '/env');
    assert.equal(info.pid, started.pid);
    assert.deepEqual(info.env, {
      PORT: String(started.port),
      K_SERVICE: 'svc',
      K_CONFIGURATION: 'svc',
      K_REVISION: 'svc-00001',
      TETHER_INSTANCE: s.name,
      GREETING: 'hi',
    });
    assert.equal(pgid(started.pid), started.pid);
    assert.notEqual(pgid(started.pid), pgid(process.pid));
  });

  it('pauses with SIGSTOP (state T), resumes with SIGCONT, and keeps the process', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000 });
    t.after(() => rt.close());
    const s = spec();
    const { pid, port } = await rt.start(s);
    assert.ok(pid);
    await rt.pause(s.name);
    await waitFor('state T', () => procState(pid) === 'T');
    await rt.resume(s.name);
    await waitFor('running again', () => procState(pid) !== 'T');
    assert.equal((await getJson(port, '/env')).pid, pid);
  });

  it('deletes a paused instance and reports the exit as requested; logs stay visible', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000 });
    t.after(() => rt.close());
    const exits: Array<[string, boolean]> = [];
    rt.onExit((name, exit) => exits.push([name, exit.requested]));
    const s = spec();
    const { pid } = await rt.start(s);
    assert.ok(pid);
    await rt.pause(s.name);
    await rt.delete(s.name);
    assert.ok(isGone(pid));
    assert.deepEqual(exits, [[s.name, true]]);
    const logs = rt.logs(s.name) ?? [];
    assert.ok(
      logs.some((l) => l.stream === 'stdout' && l.line.includes('listening on')),
      JSON.stringify(logs),
    );
  });

  it('reports an instance killed from outside as not requested', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000 });
    t.after(() => rt.close());
    const exits: Array<{ signal: string | null; requested: boolean }> = [];
    rt.onExit((_n, exit) => exits.push(exit));
    const { pid } = await rt.start(spec());
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await waitFor('exit reported', () => exits.length === 1);
    assert.deepEqual(exits[0], { code: null, signal: 'SIGKILL', requested: false });
  });

  it('fails a start whose process exits before ready, with its stderr kept', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000 });
    t.after(() => rt.close());
    const s = spec({ argv: ['node', '-e', 'console.error("boom"); process.exit(3)'] });
    await assert.rejects(rt.start(s), /exited before it was ready \(code 3/);
    assert.ok(rt.logs(s.name)?.some((l) => l.stream === 'stderr' && l.line === 'boom'));
  });

  it('fails a start that is not ready in time and kills it', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 200 });
    t.after(() => rt.close());
    const s = spec({
      argv: ['node', '-e', 'console.log(process.pid); setInterval(() => {}, 1000)'],
      startTimeoutMs: 300,
    });
    await assert.rejects(rt.start(s), /not ready within 300 ms/);
    const pid = Number(rt.logs(s.name)?.[0]?.line);
    assert.ok(pid > 0 && isGone(pid));
  });

  it('waits for readinessProbe.httpGet.path to answer 2xx, and times out when it never does', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 300 });
    t.after(() => rt.close());
    const ok = await rt.start(spec({ readinessPath: '/env' }));
    assert.ok(ok.pid);
    await assert.rejects(
      rt.start(spec({ readinessPath: '/notready', startTimeoutMs: 400 })),
      /not ready within 400 ms/,
    );
  });

  it('pauses the whole process group, and SIGKILLs an app that ignores SIGTERM after the grace period', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 300 });
    t.after(() => rt.close());
    const s = spec({
      argv: [
        'node',
        '-e',
        `process.on('SIGTERM', () => {}); const c = require('node:child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); console.log(c.pid); require('node:http').createServer(() => {}).listen(process.env.PORT)`,
      ],
    });
    const { pid } = await rt.start(s);
    assert.ok(pid);
    const grandchild = Number(await waitFor('grandchild pid', () => rt.logs(s.name)?.[0]?.line));
    await rt.pause(s.name);
    await waitFor('both stopped', () => procState(pid) === 'T' && procState(grandchild) === 'T');
    await rt.resume(s.name);
    await waitFor('both running', () => procState(pid) !== 'T' && procState(grandchild) !== 'T');
    const t0 = Date.now();
    await rt.delete(s.name);
    assert.ok(Date.now() - t0 >= 250, 'waited the grace period before SIGKILL');
    assert.ok(isGone(pid));
    // The group's SIGKILL is sent when the leader exits; the kernel finishes it a moment later.
    await waitFor('grandchild gone', () => isGone(grandchild), { timeoutMs: 2000 });
  });

  it('fails a start with a missing executable', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger() });
    t.after(() => rt.close());
    await assert.rejects(rt.start(spec({ argv: ['/nonexistent/bin/app'] })), /could not start/);
  });

  it('close() kills every instance, the whole process group included', async () => {
    const rt = new LocalRuntime({ log: silentLogger(), graceMs: 300 });
    const child = spec({
      argv: [
        'node',
        '-e',
        `const {spawn}=require('node:child_process');const c=spawn('sleep',['30'],{stdio:'ignore'});console.log(c.pid);require('node:http').createServer(()=>{}).listen(process.env.PORT)`,
      ],
    });
    const a = await rt.start(spec());
    const b = await rt.start(child);
    await waitFor('grandchild pid logged', () => rt.logs(child.name)?.length);
    const grandchild = Number(rt.logs(child.name)?.[0]?.line);
    await rt.close();
    for (const pid of [a.pid, b.pid]) assert.ok(pid && isGone(pid), `pid ${pid} still alive`);
    await waitFor(`grandchild ${grandchild} gone`, () => isGone(grandchild), { timeoutMs: 2000 });
  });
});

describe('reapOrphans()', () => {
  it('kills a recorded instance of a dead owner only when its environ still names the instance', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tether-reap-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const spawnGroup = (instance: string) => {
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
        detached: true,
        stdio: 'ignore',
        env: { TETHER_INSTANCE: instance },
      });
      t.after(() => child.kill('SIGKILL'));
      return child.pid as number;
    };
    const orphan = spawnGroup('svc-aaaaa');
    const reused = spawnGroup('other-bbbbb'); // a pid "reused" by an unrelated process
    const owned = spawnGroup('svc-ccccc');
    const deadOwner = 2 ** 22 + 1; // above pid_max: never a live process
    const write = (instance: string, pgid: number, owner: number) =>
      writeFileSync(join(dir, `${instance}.json`), JSON.stringify({ instance, pgid, owner }));
    write('svc-aaaaa', orphan, deadOwner);
    write('svc-zzzzz', reused, deadOwner);
    write('svc-ccccc', owned, process.pid); // owner alive: another running gateway
    assert.equal(reapOrphans(dir, silentLogger()), 1);
    await waitFor('orphan gone', () => isGone(orphan));
    assert.ok(!isGone(reused), 'a pid whose environ names another instance is left alone');
    assert.ok(!isGone(owned), 'a live owner keeps its instances');
    assert.deepEqual(readdirSync(dir).sort(), ['svc-ccccc.json']);
  });
});
