/**
 * @module
 * A long JSON list answered in slices: `{"<key>":[…]}` made and written a few ms at a time, the event
 * loop turning between slices (`TimeSlice`), so a 500-result batch answer does not hold the server
 * while it is stringified and written to the socket (~10 ms at once, bench:fairness). The bytes are
 * those `JSON.stringify` gives for the whole object. Used by the remember route for big batches.
 */
import { Readable } from 'node:stream';
import type { Ticket } from '../common/light-first.ts';
import { TimeSlice } from '../common/time-slice.ts';

/** Lists shorter than this are answered whole (one `JSON.stringify`). */
export const SLICED_FROM_ITEMS = 64;

/** Items stringified per chunk written. */
const CHUNK_ITEMS = 32;

/**
 * The JSON text of `{ [key]: items }` as a stream of chunks, a turn of the event loop let through
 * whenever a slice of work is spent. Send it with content type `application/json`.
 */
export function slicedJsonList(key: string, items: readonly unknown[], lane: Ticket | null = null): Readable {
  async function* chunks() {
    const slice = new TimeSlice(lane);
    yield `{${JSON.stringify(key)}:[`;
    for (let i = 0; i < items.length; i += CHUNK_ITEMS) {
      const part = items.slice(i, i + CHUNK_ITEMS).map((item) => JSON.stringify(item) ?? 'null');
      yield (i === 0 ? '' : ',') + part.join(',');
      if (slice.due()) await slice.yield();
    }
    yield ']}';
  }
  return Readable.from(chunks(), { objectMode: false });
}
