/**
 * The event row codec both drivers share (src/store/event-rows.ts): a record survives the trip to a row
 * and back, values as JSON text, a blanket retraction's null value kept null.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventToRow, rowToBelief, rowToEvent } from '../../src/store/event-rows.ts';
import { freshNamespace, makeEvent } from './conformance/helpers.ts';

describe('event-rows', () => {
  it('maps an assertion to a row and back unchanged, its value as JSON text', () => {
    const event = makeEvent(freshNamespace(), { value: { city: 'Oslo', since: 2020 }, kind: 'place' });
    const row = eventToRow(event);
    assert.equal(row.value, '{"city":"Oslo","since":2020}');
    assert.equal(row.retraction, 0);
    assert.deepEqual(rowToEvent(row), event);
  });

  it('keeps a blanket retraction null and a retraction flagged 1', () => {
    const event = makeEvent(freshNamespace(), { value: null, valueKey: null, retraction: true });
    const row = eventToRow(event);
    assert.equal(row.value, null);
    assert.equal(row.retraction, 1);
    assert.deepEqual(rowToEvent(row), event);
  });

  it('reads a belief from a joined row with what it replaced', () => {
    const event = makeEvent(freshNamespace());
    const replaced = [{ value: 'red', observedAt: 5 }];
    const belief = rowToBelief({ ...eventToRow(event), belief_replaced: JSON.stringify(replaced) });
    assert.deepEqual(belief, { event, replaced });
  });
});
