import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RateLimiter } from '../../src/auth/rate-limiter.ts';
import { ManualClock } from '../../src/common/clock.ts';

describe('RateLimiter.take()', () => {
  it('allows a burst of perMinute, then answers the wait in seconds, then refills', () => {
    const clock = new ManualClock();
    const rl = new RateLimiter({ perMinute: 30, clock });
    for (let i = 0; i < 30; i++) assert.equal(rl.take('pod:a'), 0);
    assert.equal(rl.take('pod:a'), 2);
    assert.equal(rl.take('pod:b'), 0, 'keys are independent');
    clock.advance(2000);
    assert.equal(rl.take('pod:a'), 0);
  });

  it('refills nothing when the clock steps back', () => {
    const clock = new ManualClock();
    const rl = new RateLimiter({ perMinute: 1, clock });
    assert.equal(rl.take('k'), 0);
    clock.advance(-3_600_000);
    assert.equal(rl.take('k'), 60);
  });

  it('refuses a bad option with the value shown', () => {
    assert.throws(() => new RateLimiter({ perMinute: 0, clock: new ManualClock() }), /'perMinute' must be > 0: got 0/);
  });
});
