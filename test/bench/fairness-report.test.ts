/**
 * bench:fairness's table over runs: the verdict on each row is the median of its runs' p99/quiet and the
 * worst max, over the runs in which B had a sample beside the row; a row no run sampled is not met.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mediansTable, type RowWindow, rowFigures, type Sample } from '../../bench/lib/fairness-report.ts';

const windows: RowWindow[] = [
  { name: 'quiet', from: 0, to: 999, ms: 0, sent: 0 },
  { name: 'short row', from: 1000, to: 1010, ms: 10, sent: 1 },
];

/** One run: B's quiet samples (p99 4 ms), then `beside` latencies inside the short row. */
function run(beside: number[]) {
  const samples: Sample[] = [
    ...Array.from({ length: 100 }, (_, i): Sample => [i * 5, 2 + (i % 3), 'whoami', 200]),
    ...beside.map((ms, i): Sample => [1000 + i, ms, 'whoami', 200]),
  ];
  return rowFigures(windows, samples);
}

/** The verdict column of the short row. */
const verdictOf = (text: string) =>
  (text.split('\n').find((l) => l.startsWith('short row')) ?? '').trim().split(/\s+/).pop();

describe('bench:fairness mediansTable', () => {
  it('judges a row on the runs that sampled it: a run with no sample beside it is left out', () => {
    assert.equal(verdictOf(mediansTable([run([5]), run([]), run([6])])), 'met');
    assert.equal(verdictOf(mediansTable([run([5]), run([]), run([200])])), 'MISSED', 'a max over 150 ms still misses');
    assert.equal(verdictOf(mediansTable([run([9]), run([]), run([9])])), 'MISSED', 'a ratio over 2 still misses');
  });

  it('does not meet a row no run sampled', () => {
    assert.equal(verdictOf(mediansTable([run([]), run([])])), 'MISSED');
  });
});
