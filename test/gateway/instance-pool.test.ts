import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { never, settle, setupCore } from './helpers/core-setup.ts';

describe('InstancePool (fake runtime)', () => {
  it('drops a warm instance that exits while starting instead of keeping a dead paused entry', async () => {
    const { core, svc, runtime } = setupCore({ 'serving.knative.dev/warm-pool': '1' });
    runtime.dieAfterStart = true;
    core.reconcile();
    const [first] = [...svc.instances.values()];
    assert.ok(first);
    await assert.rejects(first.ready, /exited while starting/);
    await settle(core, svc);
    for (const i of svc.instances.values()) {
      assert.ok(runtime.live.has(i.name) || i.state === 'starting', `${i.name} is ${i.state} but gone`);
    }
    assert.equal(core.pool.get(first.name), undefined);
    assert.equal(runtime.count('pause'), 0, 'never paused a dead instance');
  });

  it('backs off background starts exponentially per crash in a row, and starts over after a healthy period', async () => {
    const { core, svc, runtime } = setupCore({});
    runtime.failStarts = true;
    const backoffs: number[] = [];
    for (let i = 0; i < 4; i++) {
      await assert.rejects(core.scheduler.acquire(svc, `k${i}`, never), /did not become ready/);
      backoffs.push(Math.round((svc.backoffUntil - Date.now()) / 1000));
    }
    assert.deepEqual(backoffs, [2, 4, 8, 16]);
    svc.backoffUntil = Date.now() - 30_001; // the back-off ended more than a healthy period ago
    await assert.rejects(core.scheduler.acquire(svc, 'again', never), /did not become ready/);
    assert.equal(svc.crashes, 1);
    assert.equal(Math.round((svc.backoffUntil - Date.now()) / 1000), 2);
  });

  it('a warm instance whose pause failed serves the next new session, running, instead of idling forever', async () => {
    const { core, svc, runtime } = setupCore({ 'serving.knative.dev/warm-pool': '1' });
    runtime.failPauses = true;
    core.reconcile();
    const [warm] = [...svc.instances.values()];
    assert.ok(warm);
    await warm.ready;
    await settle(core, svc);
    assert.equal(warm.state, 'running', 'not paused');
    assert.equal(warm.warm, true);
    const s = await core.scheduler.acquire(svc, 'new', never);
    core.scheduler.release(s);
    assert.equal(s.instance, warm, 'the new session took the warm instance');
    assert.equal(warm.warm, false);
    await new Promise((r) => setTimeout(r, 60)); // the refill is poked 25 ms after a claim
    await settle(core, svc);
    assert.equal(runtime.count('start'), 2, 'and the pool refills with one start, none for the session');
  });
});
