/**
 * Unit tests of typed values: each of the six value types, their identity keys, refusals naming
 * the field and predicate, and subject normalisation.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isTetherError } from '../../src/common/errors.ts';
import { MAX_SUBJECT, MAX_TEXT, normalizeSubject, typedValue } from '../../src/memory/values.ts';
import type { PredicateDef } from '../../src/store/registry-store.ts';

const of = (valueType: PredicateDef['valueType'], extra: Partial<PredicateDef> = {}): PredicateDef => ({
  name: `a_${valueType}`,
  cardinality: 'single',
  valueType,
  ...extra,
});
const STRING = of('string');
const NUMBER = of('number');
const BOOLEAN = of('boolean');
const ENUM = of('enum', { allowed: ['Lead', 'Won', 'Lost'] });
const DATE = of('date');
const REF = of('ref');

/** Asserts `fn` throws 400 `invalid_request` naming `field`. */
function throwsField(fn: () => unknown, field: string, message?: RegExp): void {
  assert.throws(fn, (err) => {
    assert.ok(isTetherError(err), `a TetherError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_request');
    assert.equal(err.field, field);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('typedValue string', () => {
  it('trims, keeps the case, and keys case-insensitively', () => {
    assert.deepEqual(typedValue(STRING, '  Sky Blue '), { value: 'Sky Blue', valueKey: 'sky blue' });
    assert.equal(typedValue(STRING, 'BLUE').valueKey, typedValue(STRING, 'blue').valueKey);
  });

  it('takes up to 8192 characters', () => {
    assert.equal(typedValue(STRING, 'x'.repeat(MAX_TEXT)).value.toString().length, MAX_TEXT);
    throwsField(() => typedValue(STRING, 'x'.repeat(MAX_TEXT + 1)), 'value', /at most 8192/);
  });

  it('refuses a non-string or empty value, naming the field and predicate', () => {
    throwsField(
      () => typedValue(STRING, 5, 'statements[1].value'),
      'statements[1].value',
      /'a_string' takes a string, got a number/,
    );
    throwsField(() => typedValue(STRING, null), 'value', /got null/);
    throwsField(() => typedValue(STRING, ['a']), 'value', /got an array/);
    throwsField(() => typedValue(STRING, '   '), 'value', /must not be empty/);
  });
});

describe('typedValue number', () => {
  it('keys numbers by numeric value', () => {
    assert.deepEqual(typedValue(NUMBER, 3), { value: 3, valueKey: '3' });
    assert.equal(typedValue(NUMBER, 3.0).valueKey, typedValue(NUMBER, 3).valueKey);
    assert.equal(typedValue(NUMBER, -0).valueKey, typedValue(NUMBER, 0).valueKey);
    assert.equal(typedValue(NUMBER, 0.5).valueKey, '0.5');
    assert.notEqual(typedValue(NUMBER, 30).valueKey, typedValue(NUMBER, 3).valueKey);
  });

  it('refuses numeric text and non-finite numbers', () => {
    throwsField(() => typedValue(NUMBER, '3'), 'value', /'a_number' takes a number, got a string/);
    throwsField(() => typedValue(NUMBER, Number.NaN), 'value');
    throwsField(() => typedValue(NUMBER, Number.POSITIVE_INFINITY), 'value');
  });
});

describe('typedValue boolean', () => {
  it('takes true and false', () => {
    assert.deepEqual(typedValue(BOOLEAN, true), { value: true, valueKey: 'true' });
    assert.deepEqual(typedValue(BOOLEAN, false), { value: false, valueKey: 'false' });
  });

  it('refuses text and numbers', () => {
    throwsField(() => typedValue(BOOLEAN, 'true'), 'value', /'a_boolean' takes true or false/);
    throwsField(() => typedValue(BOOLEAN, 1), 'value');
  });
});

describe('typedValue enum', () => {
  it('matches allowed values case-insensitively and stores the allowed spelling', () => {
    assert.deepEqual(typedValue(ENUM, ' won '), { value: 'Won', valueKey: 'won' });
    assert.deepEqual(typedValue(ENUM, 'LEAD'), { value: 'Lead', valueKey: 'lead' });
  });

  it('refuses a value that is not allowed, listing the allowed ones', () => {
    throwsField(
      () => typedValue(ENUM, 'pending'),
      'value',
      /'pending' is not allowed for 'a_enum'; allowed: Lead, Won, Lost/,
    );
    throwsField(() => typedValue(ENUM, 1), 'value');
  });
});

describe('typedValue date', () => {
  it('keeps a calendar date as written', () => {
    assert.deepEqual(typedValue(DATE, '1990-05-17'), { value: '1990-05-17', valueKey: '1990-05-17' });
    assert.deepEqual(typedValue(DATE, '2024-02-29'), { value: '2024-02-29', valueKey: '2024-02-29' });
  });

  it('normalises a date-time to UTC ISO, so the same instant has one key', () => {
    const a = typedValue(DATE, '2026-01-01T10:00:00+02:00');
    assert.deepEqual(a, { value: '2026-01-01T08:00:00.000Z', valueKey: '2026-01-01T08:00:00.000Z' });
    assert.equal(typedValue(DATE, '2026-01-01T08:00Z').valueKey, a.valueKey);
    assert.equal(typedValue(DATE, '2026-01-01T08:00:00.000000Z').valueKey, a.valueKey);
  });

  it('refuses text that is not a date', () => {
    for (const bad of [
      'next tuesday',
      '17/05/1990',
      '1990-5-17',
      '2026-13-01',
      '2026-00-10',
      '2026-01-01T25:00Z',
      '2026-01-01T10:00',
    ]) {
      throwsField(() => typedValue(DATE, bad), 'value', /'a_date' takes a date/);
    }
    throwsField(() => typedValue(DATE, 19900517), 'value');
  });

  // Regression (was a bug): `Date.parse('2026-02-30T00:00:00Z')` rolls over instead of failing,
  // so a day that does not exist in its month is accepted.
  it('refuses a calendar date that does not exist', () => {
    for (const bad of ['2026-02-30', '2025-02-29', '2026-04-31']) {
      throwsField(() => typedValue(DATE, bad), 'value', /'a_date' takes a date/);
    }
  });
});

describe('typedValue ref', () => {
  it('normalises the referenced subject like a subject', () => {
    assert.deepEqual(typedValue(REF, '  Bob   SMITH '), { value: 'bob smith', valueKey: 'bob smith' });
  });

  it('refuses a non-string or empty reference', () => {
    throwsField(() => typedValue(REF, 7), 'value', /'a_ref' takes a ref/);
    throwsField(() => typedValue(REF, ' '), 'value', /must not be empty/);
    throwsField(() => typedValue(REF, 'x'.repeat(MAX_SUBJECT + 1)), 'value', /at most 256/);
  });
});

describe('normalizeSubject', () => {
  it('trims, collapses inner whitespace and lower-cases', () => {
    assert.equal(normalizeSubject('  Alice \t\n Smith  '), 'alice smith');
    assert.equal(normalizeSubject('ÉLODIE'), 'élodie');
  });

  it('takes up to 256 characters', () => {
    assert.equal(normalizeSubject('a'.repeat(MAX_SUBJECT)).length, MAX_SUBJECT);
    throwsField(() => normalizeSubject('a'.repeat(MAX_SUBJECT + 1)), 'subject', /at most 256/);
  });

  it('refuses an empty subject, naming the field given', () => {
    throwsField(() => normalizeSubject('   '), 'subject', /must not be empty/);
    throwsField(() => normalizeSubject('', 'statements[4].subject'), 'statements[4].subject');
  });
});
