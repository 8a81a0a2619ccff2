/**
 * @module
 * How the SQLite driver fills and queries its FTS5 index. Words come from `common/words.ts` and are
 * prefixed with 10 hex of their namespace's hash, so the postings of a word are per namespace and a
 * search never reads (or returns) another namespace's rows.
 */
import { createHash } from 'node:crypto';
import { words } from '../../common/words.ts';
import type { StoredEvent } from '../store.ts';

const prefixes = new Map<string, string>();

/** The token prefix of a namespace (memoised: it is needed for every event written). */
export function nsPrefix(namespace: string): string {
  let p = prefixes.get(namespace);
  if (p === undefined) {
    p = createHash('sha256').update(namespace).digest('hex').slice(0, 10);
    if (prefixes.size >= 10_000) prefixes.clear();
    prefixes.set(namespace, p);
  }
  return p;
}

/** The indexed text of an event: its subject, predicate, value and evidence as prefixed words. */
export function ftsBody(e: StoredEvent): string {
  const p = nsPrefix(e.namespace);
  const text = `${e.subject} ${e.predicate} ${e.value ?? ''} ${e.evidence ?? ''}`;
  return words(text)
    .map((w) => p + w)
    .join(' ');
}

/** An FTS5 MATCH expression requiring every term within `namespace`. */
export function ftsMatch(namespace: string, terms: readonly string[]): string {
  const p = nsPrefix(namespace);
  return terms.map((t) => `"${(p + t).replaceAll('"', '""')}"`).join(' AND ');
}
