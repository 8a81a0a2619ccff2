/**
 * @module
 * Issue 9 item 4: new sessions per client address per minute (`--new-sessions-per-minute`, default 60, 0 = no
 * limit), so anonymous requests cannot fill a service's instances. A token bucket per address (burst = the
 * per-minute figure, refilled evenly), on the injected clock; past it, 429 `rate_limited` + Retry-After. The
 * address is the socket's, or — when the socket is a trusted proxy (`--trusted-proxies`) — the nearest
 * untrusted address of its `X-Forwarded-For`. Buckets that are full again are dropped, so memory stays bounded
 * by the addresses seen in the last minute. Used by the scheduler when it places a new session.
 */
import type { Clock } from '../common/clock.ts';
import { TetherError } from '../common/errors.ts';
import type { TrustedProxies } from './proxy/trusted-proxies.ts';

/** Addresses kept before full buckets are swept. */
const SWEEP_AT = 10_000;

/** Limits new sessions per client address. */
export class NewSessionLimit {
  readonly perMinute: number;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  /** @param perMinute new sessions per address per minute; 0 = no limit @default 60 */
  constructor(clock: Clock, perMinute = 60) {
    if (!Number.isInteger(perMinute) || perMinute < 0) {
      throw new Error(`Cannot limit new sessions as 'perMinute' must be an integer >= 0: got ${perMinute}`);
    }
    this.perMinute = perMinute;
    this.#clock = clock;
  }

  /**
   * Takes one new session for `address`.
   * @throws {TetherError} 429 `rate_limited` with Retry-After (s) when the address is past its limit
   */
  take(address: string | undefined): void {
    if (this.perMinute === 0 || !address) return;
    const now = this.#clock.now();
    const rate = this.perMinute / 60_000; // tokens per ms
    const b = this.#buckets.get(address) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    if (b.tokens < 1) {
      this.#buckets.set(address, b);
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000));
      throw new TetherError(
        'rate_limited',
        `too many new sessions from this address (${this.perMinute} per minute); retry in ${retryAfter} s`,
        { retryAfter },
      );
    }
    b.tokens -= 1;
    this.#buckets.set(address, b);
    if (this.#buckets.size > SWEEP_AT) this.#sweep(now, rate);
  }

  #sweep(now: number, rate: number): void {
    for (const [addr, b] of this.#buckets)
      if (b.tokens + (now - b.at) * rate >= this.perMinute) this.#buckets.delete(addr);
  }
}

/**
 * The client address of a request: the socket's, or the nearest address in `X-Forwarded-For` not of a trusted
 * proxy when the socket itself is one (each proxy appends the address it saw; the rightmost are the closest).
 */
export function clientAddress(trusted: TrustedProxies, peer: string | undefined, forwardedFor: string | undefined) {
  if (forwardedFor === undefined || !trusted.has(peer)) return peer;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = (hops[i] as string).trim();
    if (hop && !trusted.has(hop)) return hop;
  }
  return peer;
}
