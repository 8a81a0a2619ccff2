/**
 * The instance range is held on this machine: once a namespaces runtime is up, an address of its range with
 * no live instance (one that is gone, its /30 removed with its veth) is unreachable here, never sent out by
 * the default route; and the held range is not taken for one of the machine's own networks, so the next
 * runtime picks the same range again.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { CANDIDATE_RANGES, chooseRange } from '../../../../src/runtime/local/isolation/address-plan.ts';
import { hostNetworks } from '../../../../src/runtime/local/isolation/network.ts';
import { isolatedRuntime, probeSpec } from './helpers.ts';

/** The route `ip` would use for `address` (`ip -j route get`): its type and device. */
function routeTo(address: string): { type?: string; dev?: string } | 'unreachable' {
  try {
    return (
      (
        JSON.parse(execFileSync('ip', ['-j', 'route', 'get', address], { encoding: 'utf8' })) as Array<{
          type?: string;
          dev?: string;
        }>
      )[0] ?? {}
    );
  } catch (err) {
    // iproute2 answers "RTNETLINK answers: No route to host" for an unreachable route
    if (/no route to host|unreachable/i.test(String((err as { stderr?: string }).stderr))) return 'unreachable';
    throw err;
  }
}

describe('namespaces isolation: the instance range', () => {
  it('routes an address of the range with no instance nowhere, and is still chosen by the next runtime', async (t) => {
    const rt = await isolatedRuntime(t);
    const started = await rt.start(probeSpec());
    const live = started.host;
    const range = CANDIDATE_RANGES.find((c) => c.startsWith(live.split('.').slice(0, 2).join('.')));
    assert.ok(range, `instance address ${live} in a candidate range`);
    // the live instance's /30 wins over the held range
    const toLive = routeTo(live);
    assert.notEqual(toLive, 'unreachable');
    assert.match(String((toLive as { dev?: string }).dev), /^tth/);
    // an address of the range that no slot has (the last /30 of the /16) goes nowhere
    const [a, b] = range.split('.');
    assert.equal(routeTo(`${a}.${b}.255.250`), 'unreachable');
    // the hold is ours: not one of the machine's networks, so the range stays the first choice
    const nets = await hostNetworks('ip');
    assert.ok(!nets.includes(range), nets.join(', '));
    assert.equal(chooseRange(nets), range);
  });
});
