/**
 * Issue 22 item 3: Redis loses its data under a running `tether gateway --session-store redis` (FLUSHALL, then a
 * restart without persistence). Each time the gateway notices (its marker key is gone) and writes its live
 * sessions and instances back, with their deadlines; a SIGKILL of the gateway after that loses nothing: the
 * restarted gateway adopts every instance and every session reaches the same process with its state.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { silentLogger } from '../../src/common/log.ts';
import { RedisSessionStore } from '../../src/sessions/redis/redis-store.ts';
import { parseRedisUrl } from '../../src/sessions/redis/redis-url.ts';
import { type AdminInstance, send, serviceYaml, waitFor, writeManifest } from '../gateway/helpers/harness.ts';
import { startRedis } from '../helpers/redis.ts';
import { type AdminSession, adminJson, LOOPBACK_PORTS, runGateway } from './helpers/gateway-process.ts';

const KEEP = 'keep.default.example.com';
const NAP = 'nap.default.example.com';

describe('tether gateway --session-store redis: Redis comes back empty', () => {
  it('writes its live sessions back after FLUSHALL and after a restart without persistence; a SIGKILL then loses nothing', async (t) => {
    const redis = await startRedis(t); // no persistence: a restart comes back empty
    const prefix = redis.prefix();
    const stateDir = await mkdtemp(join(tmpdir(), 'tether-state-'));
    t.after(() => rm(stateDir, { recursive: true, force: true }));
    const common = {
      'serving.knative.dev/session-affinity-cookie': 'app',
      'autoscaling.knative.dev/metric': 'session',
      'autoscaling.knative.dev/target': '5',
      'serving.knative.dev/sandbox-idle-policy': 'pause',
    };
    const file = await writeManifest(
      t,
      [
        serviceYaml('keep', { ...common, 'serving.knative.dev/session-timeout': '1h' }),
        // Paused before the loss: written back paused, adopted paused.
        serviceYaml('nap', { ...common, 'serving.knative.dev/session-timeout': '1s' }),
      ].join('---\n'),
    );
    const args = [
      ...['--services', file, ...LOOPBACK_PORTS, '--state-dir', stateDir],
      ...['--session-store', 'redis', '--redis-url', redis.url, '--redis-prefix', prefix],
      ...['--gateway-id', 'gw-loss', '--new-sessions-per-minute', '0'],
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
    for (let i = 0; i < 25; i++) {
      const host = i < 20 ? KEEP : NAP;
      const key = `s${i}`;
      const r = await send(first.publicUrl, { host, headers: { cookie: `app=${key}` } });
      assert.equal(r.status, 200, r.body);
      sessions.push({ host, key, pid: String(r.headers['x-pid']), count: Number(r.headers['x-count']) });
    }
    await waitFor('nap instance paused', async () => {
      const list = await adminJson<AdminInstance[]>(first, '/_tether/instances');
      return list.some((i) => i.service === 'nap' && i.state === 'paused');
    });
    const instancesBefore = await adminJson<AdminInstance[]>(first, '/_tether/instances');
    pids = instancesBefore.map((i) => i.pid as number);
    assert.equal(instancesBefore.length, 5);
    const sessionsBefore = await adminJson<AdminSession[]>(first, '/_tether/sessions');
    const bindings = (list: Array<{ id: string; instance: string; idle_deadline?: string | null }>) =>
      list.map((s) => [s.id, s.instance]).sort();

    // What Redis holds, read as another gateway would.
    const store = new RedisSessionStore({ target: parseRedisUrl(redis.url), prefix, log: silentLogger() });
    t.after(() => store.close());
    await store.ready();
    const stored = async () => {
      const [list, instances] = await Promise.all([store.list(), store.listInstances()]);
      return { list, instances };
    };
    const full = (s: Awaited<ReturnType<typeof stored>>) => s.list.length === 25 && s.instances.length === 5;
    const held = await stored();
    assert.ok(full(held));
    const expected = {
      sessions: held.list.map((r) => [r.id, r.instance, r.createdAt, r.idleAt, r.expiresAt, r.gateway]).sort(),
      instances: held.instances.map((i) => [i.name, i.pid, i.incarnation, i.state, i.warm]).sort(),
    };
    const same = (s: Awaited<ReturnType<typeof stored>>) => ({
      sessions: s.list.map((r) => [r.id, r.instance, r.createdAt, r.idleAt, r.expiresAt, r.gateway]).sort(),
      instances: s.instances.map((i) => [i.name, i.pid, i.incarnation, i.state, i.warm]).sort(),
    });
    assert.deepEqual(bindings(held.list.map((r) => ({ ...r, id: r.id.slice(0, 12) }))), bindings(sessionsBefore));

    const raw = new Redis(redis.port, '127.0.0.1');
    t.after(() => raw.quit().then(() => {}));
    await raw.flushall();
    assert.equal((await store.list()).length, 0, 'FLUSHALL took everything');
    const afterFlush = await waitFor('written back after FLUSHALL', async () => {
      const s = await stored().catch(() => undefined);
      return s && full(s) ? s : undefined;
    });
    assert.deepEqual(same(afterFlush), expected, 'the same bindings, deadlines and instances (nap paused)');

    await redis.stop();
    await redis.start();
    const afterRestart = await waitFor(
      'written back after a restart without persistence',
      async () => {
        const s = await stored().catch(() => undefined);
        return s && full(s) ? s : undefined;
      },
      { intervalMs: 100 },
    );
    assert.deepEqual(same(afterRestart), expected);

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const second = await runGateway(args);
    t.after(async () => {
      if (second.child.exitCode === null) {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
    });
    assert.match(second.out(), /"adopted":5/);
    assert.match(second.out(), /"restored":25/);
    assert.deepEqual(
      bindings(await adminJson<AdminSession[]>(second, '/_tether/sessions')),
      bindings(sessionsBefore),
      'every binding survived',
    );
    for (const s of sessions) {
      const r = await send(second.publicUrl, { host: s.host, headers: { cookie: `app=${s.key}` } });
      assert.equal(r.status, 200, r.body);
      assert.equal(String(r.headers['x-pid']), s.pid, `session ${s.key} reaches the same process`);
      assert.ok(Number(r.headers['x-count']) > s.count, 'with its state');
    }
    const now = await adminJson<AdminInstance[]>(second, '/_tether/instances');
    assert.deepEqual(now.map((i) => i.pid).sort(), [...pids].sort(), 'no instance started or lost');
  });
});
