/**
 * @module
 * A token-bucket rate limiter keyed by text (pod identity, source address), on an injectable clock.
 * Answers how long to wait when a bucket is empty. Memory is bounded: idle full buckets are dropped.
 */
import type { Clock } from '../common/clock.ts';

/** Options for `RateLimiter`. */
export interface RateLimiterOptions {
  /** Requests allowed per minute. */
  perMinute: number;
  /** Requests allowed at once after a quiet spell. @default perMinute */
  burst?: number;
  clock: Clock;
  /** Most keys tracked at once. @default 100000 */
  maxKeys?: number;
}

/** Token buckets by key. */
export class RateLimiter {
  readonly #rate: number; // tokens per ms
  readonly #capacity: number;
  readonly #clock: Clock;
  readonly #maxKeys: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: RateLimiterOptions) {
    if (!(options.perMinute > 0)) {
      throw new Error(`Cannot create rate limiter as 'perMinute' must be > 0: got ${options.perMinute}`);
    }
    this.#capacity = options.burst ?? options.perMinute;
    if (!(this.#capacity >= 1)) {
      throw new Error(`Cannot create rate limiter as 'burst' must be >= 1: got ${options.burst}`);
    }
    this.#rate = options.perMinute / 60_000;
    this.#clock = options.clock;
    this.#maxKeys = options.maxKeys ?? 100_000;
  }

  /**
   * Takes one token for `key`.
   * @returns 0 when allowed, else the seconds to wait (>= 1)
   */
  take(key: string): number {
    const now = this.#clock.now();
    let b = this.#buckets.get(key);
    if (b) {
      // A clock that steps back refills nothing (and takes nothing away).
      b.tokens = Math.min(this.#capacity, b.tokens + Math.max(0, now - b.at) * this.#rate);
      b.at = now;
    } else {
      if (this.#buckets.size >= this.#maxKeys) this.#sweep(now);
      b = { tokens: this.#capacity, at: now };
      this.#buckets.set(key, b);
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.#rate / 1000));
  }

  #sweep(now: number): void {
    for (const [k, b] of this.#buckets) {
      if (b.tokens + (now - b.at) * this.#rate >= this.#capacity) this.#buckets.delete(k);
    }
    if (this.#buckets.size >= this.#maxKeys) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
  }
}
