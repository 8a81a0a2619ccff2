/**
 * Fixtures for the resume engine tests: records, leases and the resumer over a fresh SQLite
 * `:memory:` store with a manual clock, and an assertion for 409/413 refusals by code.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { isTetherError, type TetherError } from '../../../src/common/errors.ts';
import { Leases } from '../../../src/memory/resume/leases.ts';
import { ResumeRecords } from '../../../src/memory/resume/records.ts';
import { Resumer } from '../../../src/memory/resume/resume.ts';
import { setup } from '../helpers.ts';

/** The memory fixtures plus the resume engine. */
export function setupResume(t: TestContext, options: { turnTokenLimit?: number } = {}) {
  const base = setup(t);
  const records = new ResumeRecords({ store: base.store, clock: base.clock, ...options });
  const leases = new Leases({ store: base.store, clock: base.clock });
  const resumer = new Resumer({ records, leases, reader: base.reader });
  return { ...base, records, leases, resumer };
}

/** Asserts `promise` rejects with the wire `code`; returns the error. */
export async function failsWith(promise: Promise<unknown>, code: string): Promise<TetherError> {
  let caught: unknown;
  await assert.rejects(promise, (err) => {
    caught = err;
    return true;
  });
  assert.ok(isTetherError(caught), `a TetherError, got ${String(caught)}`);
  assert.equal((caught as TetherError).code, code, (caught as Error).message);
  return caught as TetherError;
}
