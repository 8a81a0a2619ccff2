/**
 * `TetherClient.resume()` against a real memory server: the handle stamps its epoch on every record
 * write, renews on its timer (injected, moved by hand), stops writing at once when another holder
 * took over (a `lost` event, then rejections without a request), releases; from a fixed key and from
 * a workload token (the Kubernetes API double).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubernetesPlugins } from '../../src/cli/kubernetes-option.ts';
import { ManualClock } from '../../src/common/clock.ts';
import { TetherError } from '../../src/common/errors.ts';
import { silentLogger } from '../../src/common/log.ts';
import type { Every } from '../../src/sdk/agent-handle.ts';
import { TetherClient } from '../../src/sdk/client.ts';
import { kubeFlags } from '../helpers/kube-flags.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { type KubeDouble, startKubeDouble } from '../kube/double.ts';

/** A hand-driven timer: `tick()` runs what `every` scheduled. */
function manualEvery(): { every: Every; tick: () => void; period: () => number | null; stopped: () => boolean } {
  let fn: (() => void) | null = null;
  let ms: number | null = null;
  let stopped = false;
  return {
    every: (m, f) => {
      ms = m;
      fn = f;
      return () => {
        stopped = true;
      };
    },
    tick: () => fn?.(),
    period: () => ms,
    stopped: () => stopped,
  };
}

const isLost = (err: unknown) => err instanceof TetherError && err.code === 'lease_lost';

let kube: KubeDouble;
let srv: TestMemoryServer;
let dir: string;
// Server and handles share one manual clock (tokens are minted on the real clock).
const clock = new ManualClock(Date.now());
const now = () => clock.now();

before(async () => {
  kube = await startKubeDouble();
  dir = mkdtempSync(join(tmpdir(), 'tether-sdk-resume-'));
  srv = await startTestMemoryServer({
    clock,
    plugins: kubernetesPlugins(kubeFlags(kube.kubeconfigPath), silentLogger()),
  });
});
after(async () => {
  await srv.close();
  await kube.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('TetherClient.resume', () => {
  it('writes every record kind under its epoch, renews every TTL/3 and releases', async () => {
    const client = TetherClient.fromKey({ url: srv.url, key: await srv.agentKey('agents', 'sdk-r1', 86_400) });
    const timer = manualEvery();
    const agent = await client.resume({ holder: 'w1', ttlMs: 30_000, every: timer.every, now });
    assert.equal(timer.period(), 10_000);
    assert.equal(agent.resumed.fresh, true);
    assert.ok(agent.epoch > 0);
    const state = await agent.updateWorkingState({ goal: 'g', step: 1 });
    assert.equal(state.version, 1);
    assert.equal((await agent.milestone('m1', 'half')).working_state.last_milestone, 'm1');
    assert.equal((await agent.recordTurn({ role: 'user', content: 'hi', message_id: 'x' })).seq, 1);
    assert.equal((await agent.recordTurn({ role: 'user', content: 'hi', message_id: 'x' })).duplicate, true);
    const out = await agent.storeOutput({ content: 'long log', tool: 'sh' });
    assert.equal((await agent.output(out.ref)).content, 'long log');
    await agent.setPointer('repo', { type: 'git_ref', fields: { ref: 'main' } });
    assert.deepEqual(
      (await agent.pointers()).pointers.map((p) => p.name),
      ['repo'],
    );
    await agent.removePointer('repo');
    assert.equal((await agent.turns()).total, 1);
    assert.equal((await agent.workingStateHistory()).versions.length, 2);
    assert.equal((await agent.milestones()).milestones.length, 1);

    clock.advance(20_000);
    let renewed = 0;
    agent.on('renewed', () => renewed++);
    timer.tick();
    await new Promise((r) => agent.once('renewed', r));
    assert.equal(renewed, 1);
    assert.equal(Date.parse((await client.lease()).expires_at ?? ''), clock.now() + 30_000);
    clock.advance(25_000); // past the first expiry: only the renew keeps it
    await agent.recordTurn({ role: 'assistant', content: 'still mine' });

    await agent.release();
    assert.equal(timer.stopped(), true);
    assert.equal((await client.lease()).held, false);
    await assert.rejects(agent.recordTurn({ role: 'user', content: 'after release' }), isLost);
  });

  it('stops writing at once when another holder took over: a lost event, then no request at all', async () => {
    const key = await srv.agentKey('agents', 'sdk-r2', 86_400);
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const a = await TetherClient.fromKey({ url: srv.url, key, fetch: counting }).resume({
      holder: 'a',
      ttlMs: 5000,
      every: manualEvery().every,
      now: () => clock.now() - 10_000, // a's own clock runs behind: only the server sees the lapse
    });
    await a.updateWorkingState({ step: 1 });
    clock.advance(5000);
    const b = await TetherClient.fromKey({ url: srv.url, key }).resume({
      holder: 'b',
      every: manualEvery().every,
      now,
    });
    assert.ok(b.epoch > a.epoch);
    const lost = new Promise<TetherError>((r) => a.once('lost', r));
    await assert.rejects(a.updateWorkingState({ step: 2 }), isLost);
    assert.match((await lost).message, /epoch/);
    assert.equal(a.lost?.code, 'lease_lost');
    const before = requests;
    await assert.rejects(a.recordTurn({ role: 'user', content: 'x' }), isLost);
    await assert.rejects(a.setPointer('p', { type: 'env', fields: {} }), isLost);
    assert.equal(requests, before, 'no request once lost');
    assert.equal((await b.workingState()).step, 1);
    await b.release();
  });

  it('refuses to write once its own clock says the lease lapsed without a renew', async () => {
    const client = TetherClient.fromKey({ url: srv.url, key: await srv.agentKey('agents', 'sdk-r3', 86_400) });
    const agent = await client.resume({ ttlMs: 3000, every: manualEvery().every, now });
    clock.advance(3000);
    await assert.rejects(agent.recordTurn({ role: 'user', content: 'late' }), isLost);
    assert.equal((await client.peekResume()).recent_turns.length, 0);
  });

  it("waits for another holder's lease when asked, and says lease_held when not", async () => {
    const key = await srv.agentKey('agents', 'sdk-r4', 86_400);
    const first = await TetherClient.fromKey({ url: srv.url, key }).resume({
      ttlMs: 60_000,
      every: manualEvery().every,
      now,
    });
    const second = TetherClient.fromKey({ url: srv.url, key });
    await assert.rejects(
      second.resume({ every: manualEvery().every, now }),
      (e: unknown) => e instanceof TetherError && e.code === 'lease_held',
    );
    const waiting = second.resume({ waitMs: 60_000, pollMs: 5, every: manualEvery().every, now: Date.now });
    await first.release();
    const got = await waiting;
    assert.ok(got.epoch > first.epoch);
    await got.release();
  });

  it('works from a workload token: the lease holder defaults to the pod', async () => {
    clock.set(Date.now());
    const pod = kube.createClaim('sdk-wl');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, kube.issueToken(pod));
    const client = TetherClient.fromWorkloadToken({ url: srv.url, tokenFile });
    const agent = await client.resume({ every: manualEvery().every, now });
    assert.equal(agent.namespace, 'agents:sdk-wl');
    assert.equal(agent.resumed.lease.holder, pod.pod);
    await agent.updateWorkingState({ goal: 'from a pod' });
    assert.equal((await client.peekResume()).working_state.goal, 'from a pod');
    await agent.release();
  });
});
