import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import { hit, settle, setupCore } from './helpers/core-setup.ts';

const tick = () => new Promise((r) => setImmediate(r));
const wentAway = (err: unknown) =>
  isTetherError(err) && err.status === 503 && err.retryAfter === 1 && /client went away/.test(err.message);

describe('Scheduler.acquire() of one queued session key', () => {
  it('keeps serving the other requests of a session when the first waiting client leaves', async () => {
    const { core, svc } = setupCore({ 'autoscaling.knative.dev/max-scale': '1' });
    const a = await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established (two requests): not reclaimed for the queued one
    const first = new AbortController();
    const second = new AbortController();
    const p1 = core.scheduler.acquire(svc, 'b', first.signal);
    const p2 = core.scheduler.acquire(svc, 'b', second.signal);
    await tick();
    assert.equal(svc.queue.length, 1, 'one waiter per key');
    first.abort();
    await assert.rejects(p1, wentAway);
    assert.equal(svc.queue.length, 1, 'the second request still waits');
    core.table.end(a, 'idle');
    await settle(core, svc);
    const b = await p2;
    assert.equal(b.key, 'b');
    assert.equal(b.inflight, 1);
  });

  it('leaves the queue only when the last interested request has gone', async () => {
    const { core, svc } = setupCore({ 'autoscaling.knative.dev/max-scale': '1' });
    await hit(core, svc, 'a');
    await hit(core, svc, 'a'); // established: not reclaimed
    const gone = [new AbortController(), new AbortController()];
    const ps = gone.map((g) => core.scheduler.acquire(svc, 'b', g.signal));
    await tick();
    gone[1]?.abort();
    await assert.rejects(ps[1] as Promise<unknown>, wentAway);
    assert.equal(svc.queue.length, 1);
    gone[0]?.abort();
    await assert.rejects(ps[0] as Promise<unknown>, wentAway);
    assert.equal(svc.queue.length, 0);
    assert.equal(svc.placing.size, 0);
  });
});
