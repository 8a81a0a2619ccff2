/**
 * @module
 * Request rate limits of the memory server (issue 9, items 5 and 6): every key's requests (a token
 * bucket per key id, checked right after the key), and purges per admin tenant (each real purge
 * rewrites the whole database file). Past a limit: 429 `rate_limited` with `Retry-After`. The
 * defaults never bother a normal agent; 0 turns a limit off. Installed by `app.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../auth/auth-context.ts';
import { RateLimiter } from '../auth/rate-limiter.ts';
import type { Clock } from '../common/clock.ts';
import { TetherError } from '../common/errors.ts';

/** Default requests per second per key. An agent driven by a model makes a few. */
export const DEFAULT_KEY_RATE = 100;
/** Default purges per minute per admin tenant. */
export const DEFAULT_PURGE_RATE = 6;

/** Options of `RequestLimits`. */
export interface RequestLimitsOptions {
  /** Requests per second per key (a burst of 10 s worth is allowed); 0 = no limit. @default 100 */
  perKeyPerSecond?: number;
  /** Purges per minute per admin tenant (`*` counts as one); 0 = no limit. @default 6 */
  purgesPerMinute?: number;
  clock: Clock;
}

/** The limits of one server. */
export class RequestLimits {
  readonly #keys: RateLimiter | null;
  readonly #purges: RateLimiter | null;
  readonly #perKey: number;
  readonly #perPurge: number;

  constructor(options: RequestLimitsOptions) {
    this.#perKey = options.perKeyPerSecond ?? DEFAULT_KEY_RATE;
    this.#perPurge = options.purgesPerMinute ?? DEFAULT_PURGE_RATE;
    for (const [name, v] of [
      ['perKeyPerSecond', this.#perKey],
      ['purgesPerMinute', this.#perPurge],
    ] as const) {
      if (!(Number.isFinite(v) && v >= 0))
        throw new Error(`Cannot set rate limits as '${name}' must be >= 0: got ${v}`);
    }
    this.#keys =
      this.#perKey > 0
        ? new RateLimiter({ perMinute: this.#perKey * 60, burst: this.#perKey * 10, clock: options.clock })
        : null;
    this.#purges = this.#perPurge > 0 ? new RateLimiter({ perMinute: this.#perPurge, clock: options.clock }) : null;
  }

  /** Counts one request of `auth`'s key. @throws {TetherError} 429 past the limit */
  takeRequest(auth: AuthContext): void {
    const wait = this.#keys?.take(auth.keyId) ?? 0;
    if (wait > 0) {
      throw new TetherError(
        'rate_limited',
        `more than ${this.#perKey} requests a second with this key; retry in ${wait} s`,
        {
          retryAfter: wait,
        },
      );
    }
  }

  /** Counts one purge by `auth`'s tenant. @throws {TetherError} 429 past the limit */
  takePurge(auth: AuthContext): void {
    const wait = this.#purges?.take(auth.tenant) ?? 0;
    if (wait > 0) {
      throw new TetherError(
        'rate_limited',
        `more than ${this.#perPurge} purges a minute (each rewrites the database file); retry in ${wait} s`,
        { retryAfter: wait },
      );
    }
  }
}

/** Checks every keyed request against its key's limit, after the key was verified (auth plugin). */
export function installKeyRateLimit(app: FastifyInstance, limits: RequestLimits): void {
  app.addHook('onRequest', async function keyRateLimit(req) {
    if (req.auth) limits.takeRequest(req.auth);
  });
}
