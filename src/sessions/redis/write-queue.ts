/**
 * @module
 * Writes the Redis store could not make (Redis down, a connection dropped mid-write), kept in order and
 * coalesced per record: the latest write of a session or an instance replaces an older one, so the queue never
 * holds more than one entry per record and a long outage cannot grow it without bound. Flushed in order when
 * Redis is back; a write that fails again stays queued. Used by redis-store.ts.
 */

/** One write, replayable (every write of the store is idempotent). */
export type Write = () => Promise<unknown>;

/** Pending writes keyed by the record they change. */
export class WriteQueue {
  readonly #pending = new Map<string, Write>();
  #flushing: Promise<void> | null = null;

  /** Pending writes. */
  get size(): number {
    return this.#pending.size;
  }

  /** Queues `write` for `record`, after every other pending write (an older write of the record is dropped). */
  put(record: string, write: Write): void {
    this.#pending.delete(record);
    this.#pending.set(record, write);
  }

  /** True when a write of `record` is pending. */
  has(record: string): boolean {
    return this.#pending.has(record);
  }

  /**
   * Replays pending writes in order; stops at the first failure (the rest stays queued, in order).
   * Concurrent calls share one pass.
   * @returns how many writes were made
   */
  flush(): Promise<number> {
    let made = 0;
    const run = async () => {
      for (const [record, write] of this.#pending) {
        try {
          await write();
        } catch {
          return;
        }
        // A newer write of the record may have been queued while this one ran: keep that one.
        if (this.#pending.get(record) === write) this.#pending.delete(record);
        made++;
      }
    };
    const pass = (this.#flushing ?? Promise.resolve()).then(run);
    this.#flushing = pass.finally(() => {
      if (this.#flushing === guarded) this.#flushing = null;
    });
    const guarded = this.#flushing;
    return pass.then(() => made);
  }
}
