/**
 * @module
 * The verdict of the LangGraph validation run: each saver must run the whole suite (718 tests, none
 * skipped), and a failure is allowed only for a test known to fail for LangGraph's own `MemorySaver`
 * and only when the reference fails that very test in the same run. Pure: `run-validation.ts` feeds it
 * vitest's results; `verdict.test.ts` checks it.
 */

/** Tests of `@langchain/langgraph-checkpoint-validation` 1.1.1 (suites getTuple, list, put, putWrites, deleteThread). */
export const SUITE_TESTS = 718;

/**
 * Tests the reference fails in 1.1.1: MemorySaver stores whole checkpoints, not per-channel deltas
 * (the suite skips this test for a saver named `MemorySaver`; ours is named otherwise so it runs).
 */
export const KNOWN_REFERENCE_FAILURES: readonly string[] = [
  '<saver>#put > should only store channel_values that have changed (based on newVersions)',
];

/** One test's outcome, its name made saver-neutral (`<saver>` for the saver's name). */
export interface Outcome {
  saver: string;
  test: string;
  state: 'passed' | 'failed' | 'skipped' | 'pending';
}

/** Counts of one saver. */
export interface SaverCounts {
  saver: string;
  passed: number;
  failed: number;
  skipped: number;
  /** Failures the verdict allows (the reference fails them too). */
  allowed: string[];
}

/** A test's full name (suites joined by ' > ') with the saver's name taken out. */
export function neutralName(saver: string, fullName: string): string {
  return fullName
    .split(saver)
    .join('<saver>')
    .replace(/^<saver> > /, '');
}

/** Counts per saver and the problems that fail the run (none: it passes). */
export function judge(outcomes: Outcome[], reference: string): { counts: SaverCounts[]; problems: string[] } {
  const savers = [...new Set(outcomes.map((o) => o.saver))];
  const problems: string[] = [];
  const failedBy = (saver: string) =>
    new Set(outcomes.filter((o) => o.saver === saver && o.state === 'failed').map((o) => o.test));
  const referenceFailed = failedBy(reference);
  if (!savers.includes(reference)) problems.push(`the reference ${reference} did not run`);
  const counts = savers.map((saver) => {
    const mine = outcomes.filter((o) => o.saver === saver);
    const count = (state: Outcome['state']) => mine.filter((o) => o.state === state).length;
    const c: SaverCounts = {
      saver,
      passed: count('passed'),
      failed: count('failed'),
      skipped: count('skipped'),
      allowed: [],
    };
    if (mine.length !== SUITE_TESTS) problems.push(`${saver} ran ${mine.length} tests, not ${SUITE_TESTS}`);
    if (c.skipped + count('pending') > 0) problems.push(`${saver} skipped ${c.skipped + count('pending')} tests`);
    if (saver === reference) return c;
    for (const test of failedBy(saver)) {
      if (KNOWN_REFERENCE_FAILURES.includes(test) && referenceFailed.has(test)) c.allowed.push(test);
      else
        problems.push(
          `${saver} failed '${test}'${referenceFailed.has(test) ? ' (the reference did too, but it is not a known one)' : ''}`,
        );
    }
    return c;
  });
  return { counts, problems };
}
