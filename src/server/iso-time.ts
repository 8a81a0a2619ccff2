/**
 * @module
 * Epoch ms -> the ISO text the wire carries. Its own file (no Zod) so the answer text a read worker
 * builds (`answer-text.ts` -> `wire.ts`) loads no schema library there.
 */

/** ISO text of epoch ms, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}
