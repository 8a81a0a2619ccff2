/**
 * Redis session mode across a gateway crash: 200 sessions bound (some instances paused), `tether gateway`
 * killed with SIGKILL, started again on the same Redis and state folder: every session's next request reaches
 * the same process with its state, deadlines (expiry, idle) are the recorded ones and fire then, nothing leaks
 * or doubles.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { type AdminInstance, isGone, send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { startRedis } from '../helpers/redis.ts';
import { type AdminSession, adminJson, LOOPBACK_PORTS, runGateway } from './helpers/gateway-process.ts';

const KEEP = 'keep.default.example.com';
const NAP = 'nap.default.example.com';
const SOON = 'soon.default.example.com';
const DOZE = 'doze.default.example.com';

describe('tether gateway --session-store redis: SIGKILL and restart', () => {
  it('200 sessions: same process after the restart, recorded deadlines kept and fired, nothing leaked or doubled', async (t) => {
    const redis = await startRedis(t);
    const stateDir = await mkdtemp(join(tmpdir(), 'tether-state-'));
    t.after(() => rm(stateDir, { recursive: true, force: true }));
    const common = {
      'serving.knative.dev/session-affinity-cookie': 'app',
      'autoscaling.knative.dev/metric': 'session',
      'serving.knative.dev/sandbox-idle-policy': 'pause',
    };
    const file = await writeManifest(
      t,
      [
        serviceYaml('keep', {
          ...common,
          'autoscaling.knative.dev/target': '30',
          'serving.knative.dev/session-timeout': '1h',
          'serving.knative.dev/session-expiry': '2h',
        }),
        // Idle after 1 s: paused before the kill, resumed by the first request after the restart.
        serviceYaml('nap', {
          ...common,
          'autoscaling.knative.dev/target': '25',
          'serving.knative.dev/session-timeout': '1s',
        }),
        // Expires 20 s after binding: the restarted gateway must end it then, not earlier, not never.
        serviceYaml('soon', {
          ...common,
          'autoscaling.knative.dev/target': '10',
          'serving.knative.dev/session-timeout': '1h',
          'serving.knative.dev/session-expiry': '20s',
        }),
        // Not asked for after the restart: its idle timer (delete) must fire at the deadline recorded before.
        serviceYaml('doze', {
          ...common,
          'serving.knative.dev/sandbox-idle-policy': 'delete',
          'autoscaling.knative.dev/target': '5',
          'serving.knative.dev/session-timeout': '25s',
        }),
      ].join('---\n'),
    );
    const args = [
      '--services',
      file,
      ...LOOPBACK_PORTS,
      '--state-dir',
      stateDir,
      '--session-store',
      'redis',
      '--redis-url',
      redis.url,
      '--redis-prefix',
      redis.prefix(),
      '--gateway-id',
      'gw-a',
      '--max-instances',
      '20',
      '--new-sessions-per-minute',
      '0',
    ];
    const first = await runGateway(args);
    let pids: number[] = [];
    t.after(() => {
      first.child.kill('SIGKILL');
      for (const pid of pids) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });
    const sessions: Array<{ host: string; key: string; pid: string; count: number }> = [];
    const hosts = [...Array(150).fill(KEEP), ...Array(40).fill(NAP), ...Array(10).fill(SOON)] as string[];
    const soonBound = Date.now();
    for (let i = 0; i < hosts.length; i++) {
      const host = hosts[i] as string;
      const key = `s${i}`;
      const r = await send(first.publicUrl, { host, headers: { cookie: `app=${key}` } });
      assert.equal(r.status, 200, r.body);
      sessions.push({ host, key, pid: String(r.headers['x-pid']), count: Number(r.headers['x-count']) });
    }
    for (let i = 0; i < 5; i++) {
      const r = await send(first.publicUrl, { host: DOZE, headers: { cookie: `app=d${i}` } });
      assert.equal(r.status, 200, r.body);
    }
    const before = await adminJson<AdminInstance[]>(first, '/_tether/instances');
    pids = before.map((i) => i.pid as number);
    assert.equal(before.length, 5 + 2 + 1 + 1);
    await waitFor('nap instances paused', async () => {
      const list = await adminJson<AdminInstance[]>(first, '/_tether/instances');
      return list.filter((i) => i.service === 'nap' && i.state === 'paused').length === 2;
    });
    const sessionsBefore = await adminJson<AdminSession[]>(first, '/_tether/sessions');
    assert.equal(sessionsBefore.length, 205);

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    for (const pid of pids) assert.ok(!isGone(pid), `instance ${pid} outlives its gateway`);

    const second = await runGateway(args);
    t.after(async () => {
      if (second.child.exitCode === null) {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
    });
    assert.match(second.out(), /"adopted":9/);
    const after = await adminJson<AdminInstance[]>(second, '/_tether/instances');
    assert.deepEqual(
      after.map((i) => [i.name, i.pid, i.service === 'nap' ? 'paused' : 'running']).sort(),
      before.map((i) => [i.name, i.pid, i.service === 'nap' ? 'paused' : 'running']).sort(),
      'the same instances, in the state observed (nap paused)',
    );
    const sessionsAfter = await adminJson<AdminSession[]>(second, '/_tether/sessions');
    const deadlines = (list: AdminSession[]) =>
      list
        .map((s) => [
          s.id,
          s.instance,
          s.expires_at,
          s.service === 'keep' || s.service === 'doze' ? s.idle_deadline : null,
          s.gateway,
        ])
        .sort();
    assert.deepEqual(deadlines(sessionsAfter), deadlines(sessionsBefore), 'same bindings and deadlines');

    const perPid = new Map<string, number>();
    for (const s of sessions) {
      const r = await send(second.publicUrl, { host: s.host, headers: { cookie: `app=${s.key}` } });
      assert.equal(r.status, 200, r.body);
      assert.equal(String(r.headers['x-pid']), s.pid, `session ${s.key} reaches the same process`);
      // The process kept counting from where it was: its state survived (no restart, no new instance).
      const count = Number(r.headers['x-count']);
      assert.ok(count > s.count, `count ${count} continues past ${s.count}`);
      perPid.set(s.pid, Math.max(perPid.get(s.pid) ?? 0, count));
    }
    const now = await adminJson<AdminInstance[]>(second, '/_tether/instances');
    assert.equal(now.length, 9, 'no instance started or duplicated');
    assert.equal(new Set(now.map((i) => i.pid)).size, 9);

    // The `soon` sessions expire at the deadline recorded by the first gateway.
    const expiry = Date.parse(sessionsBefore.find((s) => s.service === 'soon')?.expires_at as string);
    assert.ok(expiry >= soonBound + 20_000);
    const gone = await waitFor(
      'soon sessions expired',
      async () => {
        const list = await adminJson<AdminSession[]>(second, '/_tether/sessions');
        return list.some((s) => s.service === 'soon') ? undefined : Date.now();
      },
      { timeoutMs: 40_000, intervalMs: 100 },
    );
    assert.ok(gone >= expiry, `ended at ${gone}, not before its recorded expiry ${expiry}`);
    assert.ok(gone < expiry + 3000, `ended within 3 s after its recorded expiry (${gone - expiry} ms)`);
    const soonPid = Number(before.find((i) => i.service === 'soon')?.pid);
    await waitFor('the expired instance is deleted', () => isGone(soonPid));

    // The `doze` sessions idle out (delete) at the idle deadline recorded by the first gateway.
    const idleAt = Date.parse(sessionsBefore.find((s) => s.service === 'doze')?.idle_deadline as string);
    const dozed = await waitFor(
      'doze sessions idled out',
      async () => {
        const list = await adminJson<AdminSession[]>(second, '/_tether/sessions');
        return list.some((s) => s.service === 'doze') ? undefined : Date.now();
      },
      { timeoutMs: 40_000, intervalMs: 100 },
    );
    assert.ok(dozed >= idleAt, `idled out at ${dozed}, not before its recorded deadline ${idleAt}`);
    assert.ok(dozed < idleAt + 3000, `idled out within 3 s after its recorded deadline (${dozed - idleAt} ms)`);
    const dozePid = Number(before.find((i) => i.service === 'doze')?.pid);
    await waitFor('the idle instance is deleted', () => isGone(dozePid));

    second.child.kill('SIGTERM');
    const [code] = await once(second.child, 'exit');
    assert.equal(code, 0);
    // A graceful stop in Redis mode leaves the bound instances for the next gateway.
    for (const i of now.filter((x) => x.service !== 'soon' && x.service !== 'doze'))
      assert.ok(!isGone(i.pid as number), `${i.name} kept`);
  });
});
