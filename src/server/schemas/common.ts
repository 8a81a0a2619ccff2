/**
 * @module
 * Zod pieces shared by route schemas: times (ISO 8601 or epoch ms), limits, namespace text.
 */
import { z } from 'zod';
import { isoDay } from '../../memory/values.ts';

/** An instant as ISO 8601 with a zone (`2026-11-30T08:00:00Z`) or epoch milliseconds; parsed to epoch ms. */
export const instant = z
  .union([
    z.number().int().nonnegative().max(8.64e15),
    z
      .string()
      .max(40)
      .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/, {
        message: 'must be an ISO 8601 time with a zone, e.g. 2026-11-30T08:00:00Z, or epoch milliseconds',
      }),
  ])
  .transform((v, ctx) => {
    const ms = typeof v === 'number' ? v : Date.parse(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'is not a valid time' });
      return z.NEVER;
    }
    // Date.parse takes 2026-02-30 for 2026-03-02: a day the calendar does not have is refused.
    if (typeof v === 'string' && isoDay(v.slice(0, 10)) !== v.slice(0, 10)) {
      ctx.addIssue({ code: 'custom', message: `${v.slice(0, 10)} is not a calendar date` });
      return z.NEVER;
    }
    return ms;
  });

/** An instant in a query string: digits are epoch ms, anything else ISO 8601. */
export const queryInstant = z
  .string()
  .max(40)
  .transform((v) => (/^\d+$/.test(v) ? Number(v) : v))
  .pipe(instant);

/** `tenant:agent`. */
export const namespaceText = z.string().min(3).max(257);

/** A query-string integer in [min, max]. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, { message: 'must be a whole number' })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `must be at least ${min}` })
        .max(max, { message: `must be at most ${max}` }),
    );
}

/** ISO text of epoch ms, or null (kept in its own Zod-free file: `iso-time.ts`). */
export { iso } from '../iso-time.ts';
