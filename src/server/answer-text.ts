/**
 * @module
 * The whole JSON text of the heavy answers (a history page, a recall or search, export lines), from the engine's
 * records: the same shapes (`wire.ts`) and cursor (`log-cursor.ts`) the calls answer as objects. A
 * SQLite read worker loads this file by its URL (`ANSWER_TEXT_MODULE`, handed to the store by the CLI's
 * driver table) and builds the text where it read the rows; the event loop then only writes bytes.
 */
import type { AnswerTextModule, PagePlace } from '../store/answer-text-port.ts';
import type { CurrentBelief, StoredEvent } from '../store/fact-store.ts';
import { encodeCursor } from './log-cursor.ts';
import { beliefJson, eventJson } from './wire.ts';

/** This module's URL: the `answerModule` a store loads where it reads (`store/answer-text-port.ts`). */
export const ANSWER_TEXT_MODULE: string = import.meta.url;

/** `{"events": [...], "next": cursor | null}`: what `GET /v1/memories/history` answers. */
export const historyAnswerText: AnswerTextModule['historyAnswerText'] = (
  events: readonly StoredEvent[],
  next: PagePlace | null,
) => JSON.stringify({ events: events.map(eventJson), next: next && encodeCursor(next) });

/** One line of `GET /v1/events` (NDJSON, without its newline). */
export const eventLineText: AnswerTextModule['eventLineText'] = (event: StoredEvent) =>
  JSON.stringify(eventJson(event));

/** `{"beliefs": [...]}`: what `GET /v1/memories` answers. */
export const beliefsAnswerText: AnswerTextModule['beliefsAnswerText'] = (beliefs: readonly CurrentBelief[]) =>
  JSON.stringify({ beliefs: beliefs.map(beliefJson) });
