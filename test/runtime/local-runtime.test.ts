import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { silentLogger } from '../../src/common/log.ts';
import { LocalRuntime } from '../../src/runtime/local/local-runtime.ts';
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
      // A shell prints its pid at once (a node start may take longer than the timeout on a loaded machine).
      argv: ['sh', '-c', 'echo $$; exec sleep 60'],
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
    await waitFor('grandchild gone', () => isGone(grandchild));
  });

  it('fails a start with a missing executable', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger() });
    t.after(() => rt.close());
    await assert.rejects(rt.start(spec({ argv: ['/nonexistent/bin/app'] })), /could not start/);
  });

  it('refuses a NUL byte in an env value without quoting the value, and starts nothing', async (t) => {
    const rt = new LocalRuntime({ log: silentLogger() });
    t.after(() => rt.close());
    const s = spec({ env: { API_TOKEN: 'hunter2\u0000x' } });
    await assert.rejects(rt.start(s), (err: Error) => {
      assert.match(err.message, /could not start .*NUL byte/);
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
    assert.ok(!(await rt.list()).some((i) => i.name === s.name), 'no instance recorded');
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
    await waitFor(`grandchild ${grandchild} gone`, () => isGone(grandchild));
  });
});

describe('LocalRuntime: instances outlive the gateway (detach, list, adopt)', () => {
  const DEAD_OWNER = 2 ** 22 + 1; // above pid_max: never a live process

  /** Marks every record in `dir` as owned by a dead gateway (as after a SIGKILL). */
  function killOwner(dir: string): void {
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
      const rec = JSON.parse(readFileSync(join(dir, f), 'utf8'));
      writeFileSync(join(dir, f), JSON.stringify({ ...rec, owner: DEAD_OWNER }));
    }
  }

  async function stateDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'tether-state-'));
    t.after(async () => {
      // Detached instances are nobody's: a failed assertion must not leave them running.
      for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
        try {
          process.kill(-JSON.parse(readFileSync(join(dir, f), 'utf8')).pgid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await rm(dir, { recursive: true, force: true });
    });
    return dir;
  }

  it('detach() leaves instances running; the next runtime lists them with observed state and adopts them', async (t) => {
    const dir = await stateDir(t);
    const first = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    const a = spec();
    const b = spec();
    const sa = await first.start(a);
    const sb = await first.start(b);
    await first.pause(b.name);
    assert.equal(procState(sb.pid as number), 'T', 'pause resolves once the stop is observed');
    await first.detach();
    assert.ok(!isGone(sa.pid as number) && !isGone(sb.pid as number), 'detach stops nothing');
    const keeper = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    t.after(() => keeper.close());
    const kept = await keeper.start(spec());
    const second = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    t.after(() => second.close());
    assert.equal(await second.adopt({ ...kept, service: 'svc' }), undefined, 'a live runtime keeps its own');
    // Detached records have no owner (0): listed at once, even while the detaching process lives on.
    const listed = (await second.list()).sort((x, y) => (x.name < y.name ? -1 : 1));
    const want = [
      { ...sa, service: 'svc', state: 'running' },
      { ...sb, service: 'svc', state: 'paused' },
    ].sort((x, y) => (x.name < y.name ? -1 : 1));
    assert.deepEqual(listed, want);
    const exits: Array<[string, boolean]> = [];
    second.onExit((name, exit) => exits.push([name, exit.requested]));
    assert.deepEqual(await second.adopt({ ...sa, service: 'svc' }), { ...sa, service: 'svc', state: 'running' });
    assert.equal((await second.adopt({ ...sb, service: 'svc' }))?.state, 'paused');
    assert.equal((await getJson(sa.port, '/env')).pid, sa.pid, 'the same process serves');
    await second.resume(b.name);
    assert.notEqual(procState(sb.pid as number), 'T');
    await getJson(sb.port, '/env');
    await second.delete(a.name);
    assert.ok(isGone(sa.pid as number));
    assert.deepEqual(exits, [[a.name, true]]);
    process.kill(sb.pid as number, 'SIGKILL');
    await waitFor('exit of an adopted instance killed from outside', () => exits.length === 2);
    assert.deepEqual(exits[1], [b.name, false]);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.json')),
      [`${kept.name}.json`],
      'records of ended instances are dropped',
    );
  });

  it('adopt() refuses a stale record (other start time or pid) and list() drops records of dead processes', async (t) => {
    const dir = await stateDir(t);
    const first = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    const a = spec();
    const sa = await first.start(a);
    await first.detach();
    killOwner(dir);
    const second = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    t.after(() => second.close());
    assert.equal(await second.adopt({ ...sa, service: 'svc', incarnation: '1' }), undefined);
    assert.equal(await second.adopt({ ...sa, service: 'svc', pid: process.pid }), undefined);
    assert.ok(!isGone(sa.pid as number), 'a refused adoption touches nothing');
    // A record whose pid now runs something else (its environ names no such instance) is dropped, not killed.
    writeFileSync(
      join(dir, 'svc-zzzzz.json'),
      JSON.stringify({
        instance: 'svc-zzzzz',
        service: 'svc',
        pgid: process.pid,
        startTime: '1',
        host: '127.0.0.1',
        port: 1,
        owner: DEAD_OWNER,
      }),
    );
    assert.deepEqual(
      (await second.list()).map((i) => i.name),
      [a.name],
    );
    assert.ok(!readdirSync(dir).includes('svc-zzzzz.json'));
    assert.ok(await second.adopt({ ...sa, service: 'svc' }));
  });

  it('never lists nor adopts a leftover isolated instance: list() kills it and drops its record', async (t) => {
    const dir = await stateDir(t);
    const first = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    const a = spec();
    const sa = await first.start(a);
    await first.detach();
    // As a sandboxed instance's record after its gateway was SIGKILLed (bwrap normally took it along already).
    const path = join(dir, `${a.name}.json`);
    writeFileSync(
      path,
      JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), owner: DEAD_OWNER, isolated: true }),
    );
    const second = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    t.after(() => second.close());
    assert.equal(await second.adopt({ ...sa, service: 'svc' }), undefined, 'not adoptable');
    assert.ok(!isGone(sa.pid as number), 'a refused adoption touches nothing');
    assert.deepEqual(await second.list(), []);
    await waitFor('the leftover is killed', () => isGone(sa.pid as number));
    assert.ok(!readdirSync(dir).includes(`${a.name}.json`), 'its record is dropped');
  });

  it('keeps reading the output of an adopted instance', async (t) => {
    const dir = await stateDir(t);
    const first = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    const a = spec({
      argv: [
        'node',
        '-e',
        `let n=0; setInterval(() => console.log('tick', ++n), 20); require('node:http').createServer(() => {}).listen(process.env.PORT)`,
      ],
    });
    const sa = await first.start(a);
    await first.detach();
    killOwner(dir);
    const second = new LocalRuntime({ log: silentLogger(), graceMs: 500, stateDir: dir });
    t.after(() => second.close());
    await second.adopt({ ...sa, service: 'svc' });
    await waitFor('new output after adoption', () =>
      (second.logs(a.name) ?? []).some((l) => l.line.startsWith('tick')),
    );
  });
});
