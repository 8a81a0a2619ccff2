/**
 * Light requests first (`light-first.ts`): tickets count as light from `admit` until released or
 * demoted; a request demotes itself (in its own async context) when it spends a time slice; heavy
 * work's wait (`afterLightRequests`) ends when the last light request does, or at its cap; a ticket
 * older than `LIGHT_MAX_AGE_MS` stops counting. Waits on events (a release, a timer of the code under
 * test) only: nothing races a timer against the machine's load.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import {
  admit,
  afterLightRequests,
  LIGHT_MAX_AGE_MS,
  leaveLightLane,
  lightInFlight,
  release,
  runAs,
} from '../../src/common/light-first.ts';
import { TimeSlice } from '../../src/common/time-slice.ts';

describe('light-first', () => {
  it('counts a request as light from admit to release (a second release is harmless)', () => {
    const before = lightInFlight();
    const a = admit();
    const b = admit();
    assert.equal(lightInFlight(), before + 2);
    release(a);
    release(a);
    assert.equal(lightInFlight(), before + 1);
    release(b);
    assert.equal(lightInFlight(), before);
  });

  it('demotes only the request whose async context spends a slice', async () => {
    const mine = admit();
    const other = admit();
    const base = lightInFlight();
    await runAs(mine, async () => {
      await nextTurn(); // still the same request after an await
      leaveLightLane();
    });
    assert.equal(lightInFlight(), base - 1, 'one light request fewer');
    assert.equal(mine.light, false);
    assert.equal(other.light, true);
    leaveLightLane(); // outside any request: nothing to demote
    assert.equal(other.light, true);
    release(mine);
    release(other);
  });

  it("makes a TimeSlice's first yield demote its request", async () => {
    const ticket = admit();
    await runAs(ticket, async () => {
      const slice = new TimeSlice(1);
      await slice.yield();
      assert.equal(slice.yields, 1);
    });
    assert.equal(ticket.light, false);
    release(ticket);
  });

  it('lets heavy work wait until the last light request is released', async () => {
    const a = admit();
    const b = admit();
    let over = false;
    const wait = afterLightRequests(600_000).then(() => {
      over = true;
    });
    for (let i = 0; i < 5; i++) await nextTurn();
    assert.equal(over, false, 'waits while two are in flight');
    release(a);
    for (let i = 0; i < 5; i++) await nextTurn();
    assert.equal(over, false, 'waits while one is in flight');
    release(b);
    await wait;
    assert.equal(over, true);
  });

  it('ends the wait at its cap while a light request stays in flight, and at once when none is', async () => {
    const t = admit();
    await afterLightRequests(5); // resolves by its own timer
    assert.equal(t.light, true, 'the request is still light');
    release(t);
    let now = false;
    const p = afterLightRequests(600_000).then(() => {
      now = true;
    });
    await p;
    assert.equal(now, true);
  });

  it(`stops counting a request in flight for more than ${LIGHT_MAX_AGE_MS} ms (a held stream)`, async () => {
    const base = lightInFlight();
    const stream = admit();
    assert.equal(lightInFlight(), base + 1);
    await sleep(LIGHT_MAX_AGE_MS + 50); // age only grows: after this it is old whatever the load
    assert.equal(lightInFlight(), base);
    assert.equal(stream.light, false);
    release(stream);
    assert.equal(lightInFlight(), base);
  });
});
