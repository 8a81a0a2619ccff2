/**
 * @module
 * Gateway-issued session keys: `<22 base64url random>.<22 base64url HMAC>` (128 bits each). A service with
 * `tether.dev/signed-session-keys: "true"` accepts only keys that verify, so a client cannot pick (or guess)
 * someone else's session key. The check is constant-time. Used by session-key.ts; keyed by the gateway's
 * session secret (session.secret in its data folder).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MIN_SECRET_BYTES } from '../sessions/claim-name.ts';

/** Base64url characters of 16 bytes. */
const PART = 22;
/** Length of a signed key: random part, dot, MAC. */
const SIGNED_LENGTH = PART * 2 + 1;

/** Issues and checks signed session keys. */
export class SessionSigner {
  readonly #secret: Buffer;

  /**
   * @param secret at least 16 bytes (a string counts its UTF-8 bytes)
   * @throws {Error} when the secret is shorter
   */
  constructor(secret: string | Buffer) {
    const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
    if (bytes.length < MIN_SECRET_BYTES) {
      throw new Error(
        `Cannot sign session keys as the secret must have at least ${MIN_SECRET_BYTES} bytes: got ${bytes.length}`,
      );
    }
    this.#secret = bytes;
  }

  /** A new signed session key (URL- and cookie-safe). */
  issue(): string {
    const id = randomBytes(16).toString('base64url');
    return `${id}.${this.#mac(id)}`;
  }

  /** True when `key` is one this gateway issued (same secret). Constant-time in the MAC. */
  verify(key: string): boolean {
    if (key.length !== SIGNED_LENGTH || key.charCodeAt(PART) !== 46 /* '.' */) return false;
    const expected = Buffer.from(this.#mac(key.slice(0, PART)), 'latin1');
    const given = Buffer.from(key.slice(PART + 1), 'latin1');
    // Equal lengths: a non-ASCII character becomes one latin1 byte, so `given` is PART bytes too.
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #mac(id: string): string {
    return createHmac('sha256', this.#secret).update(id).digest().subarray(0, 16).toString('base64url');
  }
}
