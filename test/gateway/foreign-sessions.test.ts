/**
 * A record of this gateway it does not know ("ours but unknown": a bind that got no answer and was undone here)
 * is ended by the scheduler's store read. The read and the end are two store calls: between them the record
 * may go (the queued undo of that bind lands) and another gateway may bind the session. The end must then leave
 * that binding alone, or the session ends up on two instances: the other gateway keeps serving it from its own
 * table while this one binds it again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { silentLogger } from '../../src/common/log.ts';
import { createGatewayCore } from '../../src/gateway/core.ts';
import { parseManifestText } from '../../src/gateway/services/load-services.ts';
import type { ServiceState } from '../../src/gateway/state.ts';
import { MemorySessionStore } from '../../src/sessions/memory-store.ts';
import { type SessionRecord, type SessionStore, sessionId } from '../../src/sessions/session-store.ts';
import { never } from './helpers/core-setup.ts';
import { FakeRuntime } from './helpers/fake-runtime.ts';
import { serviceYaml } from './helpers/harness.ts';

/** `store` as a durable one (as Redis is), its `end` calls first going through `beforeEnd`. */
function durable(store: MemorySessionStore, beforeEnd: () => Promise<void>): SessionStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'durable') return true;
      if (prop === 'end') {
        return async (...args: Parameters<SessionStore['end']>) => {
          await beforeEnd();
          return target.end(...args);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('foreign sessions: a record of ours this gateway does not know', () => {
  it('is ended only while it is still that binding: one bound since by another gateway holds', async () => {
    const clock = new ManualClock();
    const memory = new MemorySessionStore(clock);
    const key = 'k-undone';
    const id = sessionId(key);
    const ours: SessionRecord = {
      id,
      service: 'svc',
      instance: 'svc-undone',
      claim: 'svc-claim',
      state: 'idle',
      createdAt: clock.now(),
      lastActive: clock.now(),
      idleAt: null,
      expiresAt: null,
      gateway: 'gateway',
    };
    const theirs: SessionRecord = { ...ours, instance: 'svc-other', createdAt: clock.now() + 1, gateway: 'gw-other' };
    await memory.bind(ours, 1);
    await memory.putInstance({
      name: theirs.instance,
      service: 'svc',
      state: 'running',
      pid: 4242,
      incarnation: null,
      host: '127.0.0.1',
      port: 1,
      warm: false,
      gateway: 'gw-other',
    });
    let raced = false;
    // The racy point: after the scheduler read our record, before its end lands.
    const store = durable(memory, async () => {
      if (raced) return;
      raced = true;
      await memory.end('svc', id); // the queued undo of the bind that got no answer
      assert.equal((await memory.bind(theirs, 1)).outcome, 'bound'); // another gateway's first request
    });
    const runtime = new FakeRuntime();
    const core = createGatewayCore({
      services: parseManifestText(
        serviceYaml('svc', { 'autoscaling.knative.dev/metric': 'session', 'autoscaling.knative.dev/target': '1' }),
        '/m/svc.yaml',
      ),
      domain: 'example.com',
      runtime,
      store,
      clock,
      log: silentLogger(),
      queueTimeoutMs: 60_000,
      startTimeoutMs: 5000,
    });
    const svc = core.services[0] as ServiceState;

    const s = await core.scheduler.acquire(svc, key, never);
    core.scheduler.release(s);

    assert.ok(raced, 'the store read found our record and ended it');
    assert.deepEqual(await memory.get('svc', id), theirs, "the other gateway's binding holds");
    assert.equal(s.instance.name, theirs.instance, 'proxied to the instance of the binding that holds');
    assert.equal(s.instance.foreign, true);
    assert.equal(svc.sessions.size, 0, 'no binding of its own');
    core.stop();
  });
});
