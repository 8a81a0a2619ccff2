/**
 * @module
 * Word matching the way the FTS index tokenises (unicode61, diacritics removed, case folded), so
 * the engine can tell whether a folded belief — not just some older event of its fact — matches a
 * search. Pure.
 */
import { words } from '../common/words.ts';
import type { StoredEvent } from '../store/fact-store.ts';

/** Whether every term occurs as a word of the event's subject, predicate, value or evidence. */
export function eventMatches(event: StoredEvent, terms: readonly string[]): boolean {
  const text = `${event.subject} ${event.predicate} ${event.value ?? ''} ${event.evidence ?? ''}`;
  const have = new Set(words(text));
  return terms.every((t) => have.has(t));
}
