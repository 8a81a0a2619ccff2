/**
 * The per-address share of a service (issue 22 item 1) on the gateway core with a fake runtime: an address may
 * fill free slots, but once another address under its share waits, the address beyond its share gives up a
 * session (even one with a request in flight), waiters under their share go first, and an address at its share
 * keeps what it has. Black-box over real WebSockets: test/gateway/address-share-ws.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ManualClock } from '../../src/common/clock.ts';
import { isTetherError } from '../../src/common/errors.ts';
import { addressShare } from '../../src/gateway/address-share.ts';
import type { GatewayCore } from '../../src/gateway/core.ts';
import type { ServiceState, SessionEntry } from '../../src/gateway/state.ts';
import { never, settle, setupCore } from './helpers/core-setup.ts';

const FOUR = {
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
  'autoscaling.knative.dev/max-scale': '4',
};

/** Opens `n` sessions of `client`, each with its request still in flight (a held WebSocket). */
async function hold(
  { core, svc, clock }: { core: GatewayCore; svc: ServiceState; clock: ManualClock },
  client: string,
  n: number,
): Promise<SessionEntry[]> {
  const out: SessionEntry[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await core.scheduler.acquire(svc, `${client}#${i}`, never, client));
    clock.advance(1000);
  }
  return out;
}

const liveOf = (svc: ServiceState, client: string) =>
  [...svc.sessions.values()].filter((s) => s.live && s.client === client).length;

describe('address share: live sessions of a service per client address', () => {
  it('share = max(1, floor(capacity × percent / 100)); capacity = target × min(max-scale, max-instances)', () => {
    const share = (annotations: Record<string, string>, maxInstances: number, percent = 50) =>
      addressShare(setupCore(annotations).svc, maxInstances, percent);
    assert.equal(share(FOUR, 32), 2);
    assert.equal(share(FOUR, 2), 1, 'max-instances below max-scale');
    assert.equal(share({ ...FOUR, 'autoscaling.knative.dev/max-scale': '1' }, 32), 1, 'never below 1');
    assert.equal(share({ 'autoscaling.knative.dev/target': '10' }, 32), 160, 'no max-scale: max-instances');
    assert.equal(share(FOUR, 32, 75), 3);
    assert.equal(share(FOUR, 32, 100), Number.POSITIVE_INFINITY, '100 = no share');
  });

  it('an address holding all instances gives one up (in flight) to another address, down to its share', async () => {
    const setup = setupCore(FOUR, { queueTimeoutMs: 100 });
    const { core, svc } = setup;
    const held = await hold(setup, '10.0.0.2', 4);
    const b1 = await core.scheduler.acquire(svc, 'b1', never, '10.0.0.3');
    assert.equal(b1.live, true);
    assert.equal(liveOf(svc, '10.0.0.2'), 3);
    assert.equal(held.filter((s) => !s.live).length, 1, 'one held session ended');
    assert.equal(held[0]?.live, false, 'the least recently active one');
    const b2 = await core.scheduler.acquire(svc, 'b2', never, '10.0.0.4');
    assert.equal(b2.live, true);
    assert.equal(liveOf(svc, '10.0.0.2'), 2, 'down to its share (2 of 4)');
    // Every address is at or under its share now: a newcomer waits; nothing more gives way.
    await assert.rejects(
      core.scheduler.acquire(svc, 'c1', never, '10.0.0.5'),
      (err: unknown) => isTetherError(err) && err.status === 503 && (err.retryAfter ?? 0) >= 1,
    );
    assert.equal(liveOf(svc, '10.0.0.2'), 2);
    assert.match(
      await core.metrics.registry.metrics(),
      /tether_gateway_sessions_ended_total\{service="svc",reason="over_share"\} 2/,
    );
  });

  it('an idle session of the address gives way before one with a request in flight', async () => {
    const setup = setupCore(FOUR);
    const { core, svc } = setup;
    const held = await hold(setup, '10.0.0.2', 4);
    core.scheduler.release(held[2] as SessionEntry); // idle now, though the most recently active
    await core.scheduler.acquire(svc, 'b1', never, '10.0.0.3');
    assert.deepEqual(
      held.map((s) => s.live),
      [true, true, false, true],
    );
  });

  it('one address alone may use every slot and queue behind itself: nothing gives way', async () => {
    const setup = setupCore(FOUR, { queueTimeoutMs: 100 });
    const { core, svc } = setup;
    const held = await hold(setup, '10.0.0.2', 4);
    await assert.rejects(core.scheduler.acquire(svc, 'own', never, '10.0.0.2'), /became free within/);
    assert.ok(held.every((s) => s.live));
  });

  it('serves a waiter under its share before an earlier waiter of the address beyond it', async () => {
    const setup = setupCore(FOUR, { queueTimeoutMs: 2000 });
    const { core, svc } = setup;
    await hold(setup, '10.0.0.2', 4);
    const own = core.scheduler.acquire(svc, 'own', new AbortController().signal, '10.0.0.2');
    const other = await core.scheduler.acquire(svc, 'other', never, '10.0.0.3');
    assert.equal(other.live, true);
    assert.equal(svc.queue.length, 1, 'the address beyond its share still waits');
    assert.equal(svc.queue[0]?.key, 'own');
    await assert.rejects(own, /this address holds 3 live sessions of svc, its share while other addresses wait is 2/);
  });

  it('closes the WebSockets of a session that gives way on an instance other sessions keep', async () => {
    const setup = setupCore({
      ...FOUR,
      'autoscaling.knative.dev/target': '2',
      'autoscaling.knative.dev/max-scale': '1',
    });
    const { core, svc } = setup;
    const held = await hold(setup, '10.0.0.2', 2);
    let closed = 0;
    (held[0] as SessionEntry).closers = new Set([() => closed++]);
    const b = await core.scheduler.acquire(svc, 'b1', never, '10.0.0.3');
    assert.equal(closed, 1);
    assert.equal(held[0]?.live, false);
    assert.equal(b.instance, held[1]?.instance, 'the freed slot on the shared instance');
  });

  it('--address-share 100: nothing gives way', async () => {
    const setup = setupCore(FOUR, { queueTimeoutMs: 100, addressShare: 100 });
    const { core, svc } = setup;
    const held = await hold(setup, '10.0.0.2', 4);
    await assert.rejects(core.scheduler.acquire(svc, 'b1', never, '10.0.0.3'), /became free within/);
    assert.ok(held.every((s) => s.live));
    await settle(core, svc);
  });
});
