import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseDuration } from '../../src/common/durations.ts';

describe('parseDuration', () => {
  const cases: [string, number][] = [
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['0', 0],
    ['30d', 2_592_000_000],
    ['2w', 1_209_600_000],
    ['1w2d12h', 820_800_000],
    ['1.5d', 129_600_000],
  ];
  for (const [text, ms] of cases) it(`reads ${text} as ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  for (const bad of ['', '10', '-5s', '5 m', '1y', '30 d', 'd', 'abc', '1h30']) {
    it(`refuses '${bad}'`, () => assert.throws(() => parseDuration(bad), /invalid duration/));
  }
  it('formats back', () => assert.equal(formatDuration(5_400_250), '1h30m250ms'));
});
