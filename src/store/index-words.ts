/**
 * @module
 * The words a store indexes for an event, shared by every driver (SQLite's FTS5 body, PostgreSQL's
 * GIN-indexed `words` array): the words of subject, predicate, value and evidence from
 * `common/words.ts`, each prefixed with 10 hex of the namespace's hash, so the postings of a word are
 * per namespace and a search never reads (or returns) another namespace's rows.
 */
import { createHash } from 'node:crypto';
import { words } from '../common/words.ts';
import type { StoredEvent } from './fact-store.ts';

const prefixes = new Map<string, string>();

/** The word prefix of a namespace (memoised: it is needed for every event written). */
export function nsPrefix(namespace: string): string {
  let p = prefixes.get(namespace);
  if (p === undefined) {
    p = createHash('sha256').update(namespace).digest('hex').slice(0, 10);
    if (prefixes.size >= 10_000) prefixes.clear();
    prefixes.set(namespace, p);
  }
  return p;
}

/** The prefixed words of an event, in text order (repeats kept). */
export function indexWords(e: StoredEvent): string[] {
  const p = nsPrefix(e.namespace);
  const text = `${e.subject} ${e.predicate} ${e.value ?? ''} ${e.evidence ?? ''}`;
  return words(text).map((w) => p + w);
}

/** The prefixed forms of search terms within `namespace`. */
export function indexTerms(namespace: string, terms: readonly string[]): string[] {
  const p = nsPrefix(namespace);
  return terms.map((t) => p + t);
}
