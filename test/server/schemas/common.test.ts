/**
 * The shared Zod pieces (src/server/schemas/common.ts): `instant` takes ISO 8601 with a zone or epoch
 * ms, and refuses a day the calendar does not have instead of rolling it over to the next month.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instant, queryInstant } from '../../../src/server/schemas/common.ts';

describe('instant', () => {
  it('parses real days, a leap day and offsets to epoch ms', () => {
    assert.equal(instant.parse('2024-02-29T12:00:00Z'), Date.UTC(2024, 1, 29, 12));
    assert.equal(instant.parse('2026-02-28T23:00:00-05:00'), Date.UTC(2026, 2, 1, 4));
    assert.equal(instant.parse('2026-12-31'), Date.UTC(2026, 11, 31));
    assert.equal(instant.parse(0), 0);
  });

  it('refuses 2026-02-30, 2025-02-29 and 2026-04-31 rather than rolling them over', () => {
    for (const text of ['2026-02-30T12:00:00Z', '2025-02-29T00:00:00+01:00', '2026-04-31']) {
      const r = instant.safeParse(text);
      assert.equal(r.success, false, text);
      assert.match(r.error?.issues[0]?.message ?? '', new RegExp(`^${text.slice(0, 10)} is not a calendar date`));
    }
    assert.equal(queryInstant.safeParse('2026-02-30T00:00:00Z').success, false);
  });
});
