/**
 * The instance-pressure policy and the new-session limit (issue 11, issue 9 item 4), on the gateway core with a
 * fake runtime and a manual clock: at max-scale a one-request session gives way first, else the least recently
 * used paused one; established running sessions never do; new sessions per client address are rate limited.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import { clientAddress } from '../../src/gateway/new-session-limit.ts';
import { TrustedProxies } from '../../src/gateway/proxy/trusted-proxies.ts';
import { hit, never, settle, setupCore } from './helpers/core-setup.ts';

const STRICT = {
  'autoscaling.knative.dev/metric': 'session',
  'autoscaling.knative.dev/target': '1',
  'autoscaling.knative.dev/max-scale': '2',
};

describe('pressure policy at max-scale', () => {
  it('reclaims the instance of a session that never sent a second request, and keeps established ones', async () => {
    const { clock, runtime, core, svc } = setupCore(STRICT);
    const once = await hit(core, svc, 'once');
    clock.advance(1000);
    const twice = await hit(core, svc, 'twice');
    await hit(core, svc, 'twice');
    clock.advance(1000);
    const c = await hit(core, svc, 'newcomer');
    assert.equal(once.live, false, 'the one-request session ended');
    assert.ok(runtime.calls.includes(`delete ${once.instance.name}`));
    assert.equal(twice.live, true);
    assert.notEqual(c.instance, twice.instance);
    assert.equal(svc.byKey.get('once'), undefined);
    assert.match(await core.metrics.registry.metrics(), /tether_gateway_reclaims_total\{service="svc"\} 1/);
  });

  it('else reclaims the least recently used paused instance, its session ending as in delete mode', async () => {
    const { clock, runtime, core, svc } = setupCore({
      ...STRICT,
      'serving.knative.dev/sandbox-idle-policy': 'pause',
      'serving.knative.dev/session-timeout': '1m',
    });
    const older = await hit(core, svc, 'older');
    await hit(core, svc, 'older');
    clock.advance(1000);
    const newer = await hit(core, svc, 'newer');
    await hit(core, svc, 'newer');
    clock.advance(60_000);
    core.reconcile();
    await settle(core, svc);
    assert.equal(older.instance.state, 'paused');
    assert.equal(newer.instance.state, 'paused');
    await hit(core, svc, 'newcomer');
    assert.equal(older.live, false);
    assert.ok(runtime.calls.includes(`delete ${older.instance.name}`));
    assert.equal(newer.live, true);
    assert.equal(newer.instance.state, 'paused', 'the other paused session keeps its instance');
  });

  it('never reclaims running established sessions: the newcomer waits and gets 503 + Retry-After', async () => {
    const { core, svc } = setupCore(STRICT, { queueTimeoutMs: 50 });
    for (const k of ['a', 'b']) {
      await hit(core, svc, k);
      await hit(core, svc, k);
    }
    await assert.rejects(
      core.scheduler.acquire(svc, 'newcomer', never),
      (err: unknown) => isTetherError(err) && err.code === 'unavailable' && (err.retryAfter ?? 0) >= 1,
    );
    assert.equal(svc.sessions.size, 2);
  });
});

describe('new sessions per client address per minute', () => {
  it('refuses a client past N new sessions a minute with 429 + Retry-After, and only new sessions count', async () => {
    const { clock, core, svc } = setupCore({ 'autoscaling.knative.dev/target': '100' }, { newSessionsPerMinute: 3 });
    for (const k of ['a', 'b', 'c']) core.scheduler.release(await core.scheduler.acquire(svc, k, never, '10.0.0.1'));
    await assert.rejects(
      core.scheduler.acquire(svc, 'd', never, '10.0.0.1'),
      (err: unknown) =>
        isTetherError(err) && err.code === 'rate_limited' && err.status === 429 && err.retryAfter === 20,
    );
    // Known sessions of that client, and other clients, go on.
    core.scheduler.release(await core.scheduler.acquire(svc, 'a', never, '10.0.0.1'));
    core.scheduler.release(await core.scheduler.acquire(svc, 'x', never, '10.0.0.2'));
    clock.advance(20_000);
    core.scheduler.release(await core.scheduler.acquire(svc, 'd', never, '10.0.0.1'));
    await assert.rejects(core.scheduler.acquire(svc, 'e', never, '10.0.0.1'), /too many new sessions/);
  });

  it('0 means no limit', async () => {
    const { core, svc } = setupCore({ 'autoscaling.knative.dev/target': '1000' }, { newSessionsPerMinute: 0 });
    for (let i = 0; i < 100; i++) core.scheduler.release(await core.scheduler.acquire(svc, `k${i}`, never, '10.0.0.1'));
  });

  it('takes the client from X-Forwarded-For only when the socket is a trusted proxy', () => {
    const trusted = new TrustedProxies(['10.0.0.0/8']);
    assert.equal(clientAddress(trusted, '192.0.2.7', '203.0.113.9'), '192.0.2.7', 'untrusted peer: its own address');
    assert.equal(clientAddress(trusted, '10.1.1.1', '203.0.113.9'), '203.0.113.9');
    assert.equal(clientAddress(trusted, '::ffff:10.1.1.1', '198.51.100.1, 203.0.113.9, 10.2.2.2'), '203.0.113.9');
    assert.equal(clientAddress(trusted, '10.1.1.1', undefined), '10.1.1.1');
  });
});
