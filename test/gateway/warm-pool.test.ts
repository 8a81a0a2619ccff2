import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type AdminInstance,
  admin,
  procState,
  send,
  serviceYaml,
  startTestGateway,
  waitFor,
} from './helpers/harness.ts';

const HOST = 'warm.default.example.com';
const YAML = serviceYaml('warm', {
  'serving.knative.dev/sandbox-idle-policy': 'pause',
  'serving.knative.dev/warm-pool': '3',
  'serving.knative.dev/session-timeout': '30m',
  'serving.knative.dev/session-affinity-cookie': 'test',
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
});

async function startsTotal(url: string): Promise<Record<string, number>> {
  const m = await send(url, { path: '/metrics' });
  const out: Record<string, number> = {};
  for (const [, warm, n] of m.body.matchAll(
    /tether_gateway_instance_starts_total\{service="warm",warm="(\w+)"\} (\d+)/g,
  )) {
    out[warm as string] = Number(n);
  }
  return out;
}

describe('warm pool', () => {
  it('keeps 3 paused processes, serves a new session from one without a spawn, then refills', async (t) => {
    const gw = await startTestGateway(t, YAML);
    const pool = await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys');
    assert.equal(pool.length, 3);
    for (const i of pool) {
      assert.equal(i.state, 'paused');
      assert.equal(i.warm, true);
      assert.deepEqual(i.sessions, []);
      // SIGSTOP takes effect when the kernel next schedules the process: poll, bounded.
      await waitFor(`warm pid ${i.pid} stopped`, () => procState(i.pid ?? 0) === 'T');
    }
    assert.deepEqual(await startsTotal(gw.adminUrl), { true: 3 });
    const warmPids = new Set(pool.map((i) => i.pid));

    const r = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'test=11' } });
    assert.equal(r.status, 200);
    const pid = Number(r.headers['x-pid']);
    assert.ok(warmPids.has(pid), `served by a warm instance (pid ${pid})`);
    assert.equal(r.headers['x-count'], '1');
    assert.equal((await startsTotal(gw.adminUrl)).false, undefined, 'no cold start');

    const after = await waitFor('pool refilled', async () => {
      const list = await admin<AdminInstance[]>(gw, '/_tether/instances?reveal=keys');
      const warm = list.filter((i) => i.warm && i.state === 'paused');
      return warm.length === 3 ? list : undefined;
    });
    assert.equal(after.length, 4);
    const bound = after.find((i) => !i.warm);
    assert.deepEqual([bound?.pid, bound?.state, bound?.sessions], [pid, 'running', ['11']]);
    const second = await send(gw.publicUrl, { host: HOST, headers: { cookie: 'test=22' } });
    const secondPid = Number(second.headers['x-pid']);
    assert.ok(
      after.some((i) => i.warm && i.pid === secondPid),
      'the next session also takes a warm instance',
    );
  });
});
