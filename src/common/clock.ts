/**
 * @module
 * An injectable clock, so tests can move time instead of sleeping. Imports nothing.
 */

/** Source of the current time in epoch milliseconds. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.#now += ms;
  }
  /** Sets the time to `ms`. */
  set(ms: number): void {
    this.#now = ms;
  }
}
