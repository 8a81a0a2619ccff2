/**
 * @module
 * A keyed async mutex: work under the same key runs one at a time, in arrival order; different keys
 * run freely. Used where a read-decide-append must not interleave (one process). Imports nothing.
 */

/** Serialises async work per key. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` once every earlier call with the same `key` has settled. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.#tails.set(key, tail);
    try {
      return await next;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
