/**
 * Light requests first (`light-first.ts`): tickets count as light from `admit` until released or
 * demoted; the heavy work a request starts demotes that request's ticket (its owner) when it spends a
 * time slice; heavy
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

  it('demotes only the ticket it is given', () => {
    const mine = admit();
    const other = admit();
    const base = lightInFlight();
    leaveLightLane(mine);
    assert.equal(lightInFlight(), base - 1, 'one light request fewer');
    assert.equal(mine.light, false);
    assert.equal(other.light, true);
    leaveLightLane(mine); // already heavy: counted once
    leaveLightLane(null); // background work: nothing to demote
    assert.equal(lightInFlight(), base - 1);
    assert.equal(other.light, true);
    release(mine);
    release(other);
    leaveLightLane(other); // released: no longer counted, so not counted off twice
    assert.equal(lightInFlight(), base - 2);
  });

  it("makes a TimeSlice's first yield demote its owner, and an ownerless slice demote nobody", async () => {
    const owner = admit();
    const bystander = admit();
    const owned = new TimeSlice(owner, 1);
    await owned.yield();
    assert.equal(owned.yields, 1);
    assert.equal(owner.light, false);
    assert.equal(bystander.light, true);
    const background = new TimeSlice(null, 1);
    const waited = background.yield(); // waits for the light bystander, at most MAX_DEFER_MS
    await nextTurn();
    assert.equal(bystander.light, true, 'an ownerless slice demotes nobody');
    release(bystander);
    await waited;
    assert.equal(background.yields, 1);
    release(owner);
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
