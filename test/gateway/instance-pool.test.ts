import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { settle, setupCore } from './helpers/core-setup.ts';

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
});
