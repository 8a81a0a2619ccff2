/**
 * @module
 * How the SQLite driver fills and queries its FTS5 index: the prefixed words of `store/index-words.ts`
 * (shared with the PostgreSQL driver) as the body, and a MATCH of every prefixed term.
 */

import type { StoredEvent } from '../fact-store.ts';
import { indexTerms, indexWords } from '../index-words.ts';

/** The indexed text of an event: its subject, predicate, value and evidence as prefixed words. */
export function ftsBody(e: StoredEvent): string {
  return indexWords(e).join(' ');
}

/** An FTS5 MATCH expression requiring every term within `namespace`. */
export function ftsMatch(namespace: string, terms: readonly string[]): string {
  return indexTerms(namespace, terms)
    .map((t) => `"${t.replaceAll('"', '""')}"`)
    .join(' AND ');
}
