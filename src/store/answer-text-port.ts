/**
 * @module
 * The contract between the server's wire shapes and a store that builds a heavy read's whole answer
 * text where it read the rows (SQLite: in a read worker), so the event loop only writes bytes: no rows
 * cloned across threads, no mapping, no JSON.stringify, no garbage per event. The text is the server's
 * (`server/answer-text.ts`); a store gets it as a module to load (`answerModule`, like the fold module),
 * never by importing `server/`. Types and one helper, no I/O.
 */
import type { BeliefQuery, CurrentBelief, ExportQuery, StoredEvent } from './fact-store.ts';
import type { FoldQuery } from './log-fold-port.ts';
import type { FactLogQuery, LogPosition } from './log-reads.ts';

/** The fold-order place a history page ends at (the `next` of its answer). */
export type PagePlace = Omit<LogPosition, 'subject' | 'predicate'>;

/** What an answer module (the `answerModule` URL a store is given) exports. */
export interface AnswerTextModule {
  /** The JSON text of a history answer: `{"events": [...], "next": cursor | null}`. */
  historyAnswerText(events: readonly StoredEvent[], next: PagePlace | null): string;
  /** The JSON text of a recall or search answer: `{"beliefs": [...]}`. */
  beliefsAnswerText(beliefs: readonly CurrentBelief[]): string;
  /** One export line (NDJSON, without its newline) of an event. */
  eventLineText(event: StoredEvent): string;
}

/** An answer's UTF-8 bytes (moved from the thread that built them, not copied). */
export type AnswerBytes = Uint8Array;

/**
 * A page of export lines as bytes: one line (with its newline) per event, in export order. The server
 * puts each tenant's registry versions before its first event: `tenantStarts` says where (byte offset)
 * each tenant of the page first appears.
 */
export interface ExportPageBytes {
  body: AnswerBytes;
  /** Events in the page (fewer than asked: the last page). */
  count: number;
  /** The id of the page's last event (the next page's `since`); null for an empty page. */
  lastId: string | null;
  tenantStarts: { tenant: string; at: number }[];
}

/** A store's heavy reads answered as finished JSON bytes, built off the event loop. */
export interface RenderedReads {
  /**
   * One history page of one fact: at most `query.limit` events (one more is read to know whether a
   * page follows) and the `next` place, as `historyAnswerText` writes them.
   */
  historyPage(query: FactLogQuery): Promise<AnswerBytes>;
  /** `foldFactLogs` (see `OffLoopFolds`), its beliefs as `beliefsAnswerText` writes them. */
  foldFactLogs(query: FoldQuery): Promise<{ capped: true } | { capped: false; body: AnswerBytes }>;
  /** `searchBeliefs`, answered as `beliefsAnswerText` writes it. */
  searchBeliefs(query: BeliefQuery & { terms: string[] }): Promise<AnswerBytes>;
  /** `currentBeliefs`, answered as `beliefsAnswerText` writes it. */
  currentBeliefs(query: BeliefQuery): Promise<AnswerBytes>;
  /** `exportEvents`, as export lines. */
  exportPage(query: ExportQuery): Promise<ExportPageBytes>;
}

/**
 * A page of `limit` events from a read of `limit + 1`: the events and where the next page starts
 * (null when the read found no more). Cuts `events` in place.
 */
export function cutPage(events: StoredEvent[], limit: number): { events: StoredEvent[]; next: PagePlace | null } {
  if (events.length <= limit) return { events, next: null };
  events.length = limit;
  const last = events[limit - 1] as StoredEvent;
  return { events, next: { observedAt: last.observedAt, retraction: last.retraction, id: last.id } };
}
