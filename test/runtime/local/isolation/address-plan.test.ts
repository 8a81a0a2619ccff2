import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CANDIDATE_RANGES,
  chooseRange,
  overlaps,
  SLOTS,
  slotOfName,
  slotPlan,
} from '../../../../src/runtime/local/isolation/address-plan.ts';

describe('chooseRange()', () => {
  it('takes the first candidate when the machine uses none of them', () => {
    assert.equal(chooseRange(['192.0.2.2/24', '127.0.0.1/8', '0.0.0.0/0']), CANDIDATE_RANGES[0]);
  });

  it('skips every candidate that overlaps an address or route of the machine', () => {
    assert.equal(chooseRange(['10.0.0.0/8']), '100.91.0.0/16');
    assert.equal(chooseRange(['10.213.7.9/32', '10.177.0.0/20']), '100.91.0.0/16');
    assert.equal(chooseRange(['100.64.0.0/10', '10.0.0.0/8']), '172.29.0.0/16');
  });

  it('refuses when every candidate collides, naming them', () => {
    assert.throws(() => chooseRange(['0.0.0.0/1', '128.0.0.0/1']), /every candidate instance network collides/);
  });
});

describe('slotPlan()', () => {
  it('gives each slot its own /30, names and uid, and names map back to their slot', () => {
    const a = slotPlan('10.213.0.0/16', 0);
    assert.deepEqual(
      [a.hostIp, a.instanceIp, a.netns, a.hostIf, a.instanceIf],
      ['10.213.0.1', '10.213.0.2', 'tth0000', 'tth0000h', 'tth0000c'],
    );
    const last = slotPlan('10.213.0.0/16', SLOTS - 1);
    assert.equal(last.instanceIp, '10.213.255.254');
    assert.equal(last.hostIf.length <= 15, true, 'an interface name fits IFNAMSIZ');
    assert.notEqual(slotPlan('10.213.0.0/16', 1).uid, a.uid);
    assert.equal(slotOfName(last.hostIf), SLOTS - 1);
    assert.equal(slotOfName('eth0'), undefined);
    assert.throws(() => slotPlan('10.213.0.0/16', SLOTS), /slot must be/);
  });

  it('slot networks never overlap each other', () => {
    assert.equal(
      overlaps(`${slotPlan('10.213.0.0/16', 5).hostIp}/30`, `${slotPlan('10.213.0.0/16', 6).hostIp}/30`),
      false,
    );
  });
});
