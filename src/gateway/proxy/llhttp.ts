/**
 * @module
 * Typed access to Node's own llhttp binding (`HTTPParser` of the internal `_http_common` module), which
 * the raw HTTP/1.1 path uses instead of node:http's objects. Verified on Node 20: callbacks are set by
 * index, `execute` returns the bytes parsed or an Error with an llhttp `code` (e.g. `HPE_HEADER_OVERFLOW`),
 * and returning 1 from the headers callback means "no body", 2 "stop after this head" (upgrade).
 * Pausing from inside a callback does not work on Node 20, so callers queue instead.
 */
import { createRequire } from 'node:module';

/** A parse error as `execute`/`finish` return it. */
export interface ParseError extends Error {
  /** llhttp error name, e.g. `HPE_HEADER_OVERFLOW`, `HPE_INVALID_METHOD`. */
  code: string;
  bytesParsed: number;
}

/** Node's llhttp parser object (only what the proxy uses). */
export interface HttpParser {
  initialize(type: number, resource: object, maxHeaderSize?: number, lenient?: number): void;
  /** @returns bytes parsed, or a ParseError */
  execute(data: Buffer): number | ParseError;
  /** Signals EOF (ends a close-delimited message). */
  finish(): undefined | ParseError;
  /** Frees the native parser; never call it from inside one of its callbacks. */
  close(): void;
  [index: number]: unknown;
}

interface HttpParserClass {
  new (): HttpParser;
  REQUEST: number;
  RESPONSE: number;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
}

const common = createRequire(import.meta.url)('_http_common') as { HTTPParser: HttpParserClass; methods: string[] };

/** The parser class. */
export const HTTPParser: HttpParserClass = common.HTTPParser;
/** Method names by llhttp method index. */
export const METHODS: readonly string[] = common.methods;

/** `kOnHeadersComplete` return value: the message has no body (a response to HEAD). */
export const SKIP_BODY = 1;
/** `kOnHeadersComplete` return value: stop parsing right after this head (handed to another server). */
export const STOP_AFTER_HEAD = 2;

/** The callbacks of a parser; each is called with `this` = the parser, whose `owner` is set. */
export interface ParserCallbacks {
  onMessageBegin?: () => void;
  onHeaders: (headers: string[], url: string) => void;
  onHeadersComplete: (...args: never[]) => number;
  onBody: (chunk: Buffer) => void;
  onMessageComplete: () => void;
}

/**
 * A new parser of `type` (`HTTPParser.REQUEST` or `RESPONSE`) with these callbacks and `owner`, which the
 * callbacks reach as `this.owner` (module-level functions: no closure per connection).
 */
export function createParser<T>(type: number, owner: T, cb: ParserCallbacks): HttpParser & { owner: T } {
  const p = new HTTPParser() as HttpParser & { owner: T };
  p.initialize(type, {});
  if (cb.onMessageBegin) p[HTTPParser.kOnMessageBegin] = cb.onMessageBegin;
  p[HTTPParser.kOnHeaders] = cb.onHeaders;
  p[HTTPParser.kOnHeadersComplete] = cb.onHeadersComplete;
  p[HTTPParser.kOnBody] = cb.onBody;
  p[HTTPParser.kOnMessageComplete] = cb.onMessageComplete;
  p.owner = owner;
  return p;
}

/** True when `r` (what `execute` returned) is a parse error. */
export function isParseError(r: unknown): r is ParseError {
  return r instanceof Error;
}
