/**
 * The validation run's verdict (`verdict.ts`): a saver passes only with the whole suite run and no
 * failure but a known one the reference shares in the same run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judge, KNOWN_REFERENCE_FAILURES, neutralName, type Outcome, SUITE_TESTS } from './verdict.ts';

const KNOWN = KNOWN_REFERENCE_FAILURES[0] as string;

/** A whole run of `saver`, every test passed but the `failed` ones. */
function run(saver: string, failed: string[] = []): Outcome[] {
  const names = [KNOWN, ...Array.from({ length: SUITE_TESTS - 1 }, (_, i) => `<saver>#list > case ${i}`)];
  return names.map((test) => ({ saver, test, state: failed.includes(test) ? 'failed' : 'passed' }));
}

describe('validation verdict', () => {
  it('names tests without the saver', () => {
    assert.equal(neutralName('S (x)', 'S (x) > S (x)#put > should work'), '<saver>#put > should work');
  });

  it('allows the known failure only when the reference fails it too', () => {
    const shared = judge([...run('ref', [KNOWN]), ...run('mine', [KNOWN])], 'ref');
    assert.deepEqual(shared.problems, []);
    assert.deepEqual(shared.counts[1]?.allowed, [KNOWN]);
    const alone = judge([...run('ref'), ...run('mine', [KNOWN])], 'ref');
    assert.match(alone.problems.join(), /mine failed/);
  });

  it('fails any other failure, even one the reference shares', () => {
    const other = '<saver>#list > case 3';
    const r = judge([...run('ref', [KNOWN, other]), ...run('mine', [KNOWN, other])], 'ref');
    assert.deepEqual(r.problems, [`mine failed '${other}' (the reference did too, but it is not a known one)`]);
  });

  it('fails a run with tests missing or skipped, or without the reference', () => {
    const short = run('mine').slice(1);
    assert.match(judge([...run('ref'), ...short], 'ref').problems.join(), /ran 717 tests/);
    const skipped = run('mine').map((o, i) => (i === 5 ? { ...o, state: 'skipped' as const } : o));
    assert.match(judge([...run('ref'), ...skipped], 'ref').problems.join(), /skipped 1/);
    assert.match(judge(run('mine'), 'ref').problems.join(), /did not run/);
  });
});
