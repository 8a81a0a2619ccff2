import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../src/common/log.ts';
import { rehydrate } from '../../src/gateway/rehydrate.ts';
import { settle, setupCore } from './helpers/core-setup.ts';

describe('rehydrate', () => {
  it('adopts the warm instances a previous run left, and the reconciler trims them to a lowered warm-pool', async () => {
    const { core, svc, runtime, store } = setupCore({ 'serving.knative.dev/warm-pool': '1' });
    for (const [name, pid] of [
      ['svc-aaaaa', 501],
      ['svc-bbbbb', 502],
    ] as const) {
      const found = {
        name,
        service: 'svc',
        state: 'paused' as const,
        pid,
        incarnation: `t${pid}`,
        host: '127.0.0.1',
        port: 1,
      };
      runtime.leftovers.set(name, found);
      await store.putInstance({ ...found, warm: true, gateway: 'g1' });
    }
    const result = await rehydrate(core, { store, runtime, log: silentLogger(), gatewayId: 'g1' });
    assert.equal(result.adopted, 2);
    core.reconcile();
    await settle(core, svc);
    const left = [...svc.instances.values()];
    assert.equal(left.length, 1, 'the previous run had a warm pool of 2: one is deleted');
    assert.deepEqual([left[0]?.warm, left[0]?.state], [true, 'paused']);
    assert.equal(runtime.count('start'), 0, 'the kept one is adopted, not started anew');
  });
});
