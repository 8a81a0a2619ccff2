/**
 * @module
 * The `next` / `cursor` of a history page on the wire: the fold-order place of the page's last event
 * (observed_at, retraction, id) as opaque base64url text. A cursor that is not one is a 400 naming
 * the field. Used by the memory calls (HTTP and MCP alike).
 */
import { invalidRequest } from '../common/errors.ts';
import type { LogPosition } from '../store/log-reads.ts';

type Place = Omit<LogPosition, 'subject' | 'predicate'>;

/** The wire text of a place. */
export function encodeCursor(place: Place): string {
  return Buffer.from(JSON.stringify([place.observedAt, place.retraction ? 1 : 0, place.id])).toString('base64url');
}

/**
 * The place a cursor names.
 * @throws {TetherError} 400 `invalid_request` naming `field` when the text is not a cursor this server gave
 */
export function decodeCursor(text: string, field = 'cursor'): Place {
  const bad = () => invalidRequest(field, 'is not a cursor of this listing (pass the `next` of the page before)');
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) throw bad();
  const [observedAt, retraction, id] = parsed as unknown[];
  if (!Number.isSafeInteger(observedAt) || (retraction !== 0 && retraction !== 1)) throw bad();
  if (typeof id !== 'string' || !/^[\x21-\x7e]{1,64}$/.test(id)) throw bad();
  return { observedAt: observedAt as number, retraction: retraction === 1, id };
}
