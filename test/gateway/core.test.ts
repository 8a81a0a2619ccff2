import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import { sessionId } from '../../src/sessions/session-store.ts';
import { hit, never, settle, setupCore as setup } from './helpers/core-setup.ts';

describe('gateway core (fake runtime, manual clock)', () => {
  it('delete policy: ends an idle session and deletes its instance exactly at the timeout', async () => {
    const { clock, runtime, core, svc, store } = setup({ 'serving.knative.dev/session-timeout': '30m' });
    const s = await hit(core, svc, 'k1');
    assert.match(s.claim, /^svc-[0-9a-f]{32}$/);
    assert.equal((await store.get('svc', sessionId('k1')))?.claim, s.claim);
    clock.advance(30 * 60_000 - 1);
    core.reconcile();
    assert.equal(svc.sessions.size, 1);
    clock.advance(1);
    core.reconcile();
    assert.equal(svc.sessions.size, 0);
    await settle(core, svc);
    assert.equal(svc.instances.size, 0);
    assert.equal(runtime.live.size, 0);
    assert.equal(await store.get('svc', sessionId('k1')), undefined);
  });

  it('pause policy: pauses an idle instance, keeps the binding, and resumes it on the next request', async () => {
    const { clock, runtime, core, svc } = setup({
      'serving.knative.dev/sandbox-idle-policy': 'pause',
      'serving.knative.dev/session-timeout': '10m',
    });
    const s = await hit(core, svc, 'k1');
    const name = s.instance.name;
    clock.advance(10 * 60_000);
    core.reconcile();
    assert.equal(s.instance.state, 'pausing', 'paused only once the runtime observed it');
    await s.instance.pausing;
    assert.equal(s.instance.state, 'paused');
    assert.deepEqual(runtime.live.get(name)?.paused, true);
    core.reconcile(); // idempotent
    assert.equal(runtime.count('pause'), 1);
    assert.equal(core.scheduler.route(svc, 'k1'), undefined, 'fast path refuses a paused instance');
    const again = await hit(core, svc, 'k1');
    assert.equal(again, s);
    assert.equal(runtime.live.get(name)?.paused, false);
    assert.equal(runtime.count('start'), 1);
  });

  it('a request during a slow pause waits for the pause to be observed, then resumes the instance', async () => {
    const { clock, runtime, core, svc } = setup({
      'serving.knative.dev/sandbox-idle-policy': 'pause',
      'serving.knative.dev/session-timeout': '10m',
    });
    const s = await hit(core, svc, 'k1');
    let observed!: () => void;
    runtime.pauseGate = new Promise((r) => {
      observed = r;
    });
    clock.advance(10 * 60_000);
    core.reconcile();
    assert.equal(s.instance.state, 'pausing');
    assert.equal(core.scheduler.route(svc, 'k1'), undefined, 'nothing is routed to a pausing instance');
    const next = hit(core, svc, 'k1');
    await new Promise((r) => setImmediate(r));
    assert.equal(runtime.count('resume'), 0, 'no resume before the pause is observed');
    observed();
    assert.equal(await next, s);
    assert.deepEqual(
      runtime.calls.filter((c) => !c.startsWith('start')),
      [`pause ${s.instance.name}`, `resume ${s.instance.name}`],
    );
    assert.equal(s.instance.state, 'running');
  });

  it('a request in flight is activity; expiry ends the session regardless', async () => {
    const { clock, runtime, core, svc } = setup({
      'serving.knative.dev/session-timeout': '1m',
      'serving.knative.dev/session-expiry': '2h',
    });
    const s = await core.scheduler.acquire(svc, 'k1', never); // held open
    clock.advance(60 * 60_000);
    core.reconcile();
    assert.equal(s.live, true, 'not idle while a request is in flight');
    clock.advance(60 * 60_000);
    core.reconcile();
    assert.equal(s.live, false);
    await settle(core, svc);
    assert.equal(runtime.live.size, 0);
  });

  it('warm pool 2 + min-scale 1: fills, serves a new session from the pool without a start, refills', async () => {
    const { runtime, core, svc } = setup({
      'serving.knative.dev/warm-pool': '2',
      'autoscaling.knative.dev/min-scale': '1',
    });
    core.reconcile();
    await settle(core, svc);
    const all = [...svc.instances.values()];
    assert.equal(all.filter((i) => i.warm && i.state === 'paused').length, 2);
    assert.equal(all.filter((i) => !i.warm && i.state === 'running' && i.sessions.size === 0).length, 1);
    assert.equal(runtime.count('start'), 3);
    const s = await hit(core, svc, 'k1');
    assert.equal(runtime.count('start'), 3, 'no start for the claim');
    assert.ok(all.filter((i) => i.warm === false).includes(s.instance));
    assert.ok(runtime.calls.includes(`resume ${s.instance.name}`));
    await settle(core, svc);
    assert.equal(runtime.count('start'), 4, 'refilled');
    assert.equal([...svc.instances.values()].filter((i) => i.warm).length, 2);
  });

  it('max-scale also bounds claims from the warm pool', async () => {
    const { core, svc } = setup({ 'serving.knative.dev/warm-pool': '2', 'autoscaling.knative.dev/max-scale': '1' });
    core.reconcile();
    await settle(core, svc);
    const a = await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established: not reclaimed for b
    assert.equal(a.instance.warm, false);
    const waiting = core.scheduler.acquire(svc, 'b', never);
    await new Promise((r) => setImmediate(r));
    assert.equal(svc.queue.length, 1, 'b waits although warm instances are paused');
    core.table.end(a, 'idle');
    await settle(core, svc);
    const b = await waiting;
    assert.ok([...svc.instances.values()].filter((i) => !i.warm).every((i) => i === b.instance));
  });

  it('target 2 + max-scale 2: shares instances, then queues FIFO and serves the head when a slot frees', async () => {
    const { core, svc, runtime } = setup({
      'autoscaling.knative.dev/target': '2',
      'autoscaling.knative.dev/max-scale': '2',
    });
    // Two requests each: established sessions, never reclaimed for a newcomer (reclaim.test.ts).
    const a = await hit(core, svc, 'a');
    const b = await hit(core, svc, 'b');
    assert.equal(a.instance, b.instance);
    const c = await hit(core, svc, 'c');
    await hit(core, svc, 'd');
    for (const k of ['a', 'b', 'c', 'd']) await hit(core, svc, k);
    assert.notEqual(c.instance, a.instance);
    assert.equal(runtime.count('start'), 2);
    const order: string[] = [];
    const e = core.scheduler.acquire(svc, 'e', never).then((s) => order.push(s.key ?? ''));
    const f = core.scheduler.acquire(svc, 'f', never).then((s) => order.push(s.key ?? ''));
    await new Promise((r) => setImmediate(r));
    assert.equal(svc.queue.length, 2);
    core.table.end(a, 'idle'); // b stays: the instance stays, one slot frees for the head of the queue
    await e;
    assert.deepEqual(order, ['e']);
    assert.equal(svc.byKey.get('e')?.instance, b.instance);
    assert.equal(svc.queue.length, 1);
    core.stop();
    await assert.rejects(f, (err: unknown) => isTetherError(err) && err.code === 'unavailable');
  });

  it('concurrent first requests of one new key share one placement', async () => {
    const { core, svc, runtime } = setup({});
    let open!: () => void;
    runtime.gate = new Promise((r) => {
      open = r;
    });
    const all = Promise.all([1, 2, 3].map(() => core.scheduler.acquire(svc, 'same', never)));
    await new Promise((r) => setImmediate(r));
    open();
    const got = await all;
    assert.equal(new Set(got).size, 1);
    assert.equal(got[0]?.inflight, 3);
    assert.equal(runtime.count('start'), 1);
  });

  it('an instance that dies ends its sessions and serves a queued request on a new instance', async () => {
    const { core, svc, runtime } = setup({ 'autoscaling.knative.dev/max-scale': '1' });
    const a = await hit(core, svc, 'a');
    const waiting = core.scheduler.acquire(svc, 'b', never);
    await new Promise((r) => setImmediate(r));
    runtime.kill(a.instance.name);
    assert.equal(a.live, false);
    const b = await waiting;
    assert.notEqual(b.instance, a.instance);
    assert.equal(runtime.count('start'), 2);
  });

  it('a full queue and a queue timeout answer 503 unavailable with Retry-After', async () => {
    const { core, svc } = setup({ 'autoscaling.knative.dev/max-scale': '1' }, { maxQueue: 1, queueTimeoutMs: 30 });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established: it keeps its instance
    const queued = core.scheduler.acquire(svc, 'b', never);
    await assert.rejects(core.scheduler.acquire(svc, 'c', never), /queue of svc is full/);
    await assert.rejects(queued, (err: unknown) => isTetherError(err) && err.status === 503 && err.retryAfter === 1);
    assert.equal(svc.queue.length, 0);
  });

  it('a waiter whose client goes away leaves the queue', async () => {
    const { core, svc } = setup({ 'autoscaling.knative.dev/max-scale': '1' });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a');
    const gone = new AbortController();
    const p = core.scheduler.acquire(svc, 'b', gone.signal);
    await new Promise((r) => setImmediate(r));
    assert.equal(svc.queue.length, 1);
    gone.abort();
    await assert.rejects(p);
    assert.equal(svc.queue.length, 0);
  });

  it('a failing start answers 503 and backs off background starts', async () => {
    const { core, svc, runtime } = setup({ 'serving.knative.dev/warm-pool': '1' });
    runtime.failStarts = true;
    core.reconcile();
    await settle(core, svc);
    await assert.rejects(core.scheduler.acquire(svc, 'a', never), /did not become ready/);
    const starts = runtime.count('start');
    core.reconcile();
    core.reconcile();
    assert.equal(runtime.count('start'), starts, 'no retry storm during the back-off');
    assert.equal(svc.instances.size, 0);
  });
});
