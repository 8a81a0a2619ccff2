/**
 * @module
 * Notices that Redis lost its data under a running gateway (restarted without persistence, FLUSHALL, FLUSHDB):
 * a marker key holds a random token, set by the first gateway to look; each gateway remembers the token it saw
 * and reads it again on every new connection and every few seconds. Gone or changed (another gateway noticed
 * first and set a new one) means the data went with it: the owner's `restore` writes back what it holds, then
 * the marker is set again (a failed restore is tried again at the next check). Used by redis-store.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../common/log.ts';

/** The two Redis calls the marker needs. */
export interface MarkerBackend {
  /** GET: the value, or null when the key is absent. */
  get(key: string): Promise<string | null>;
  /** SET NX: true when the key was absent and is set now. */
  setIfAbsent(key: string, value: string): Promise<boolean>;
}

/** The marker of one key prefix, as one gateway sees it. */
export class DataMarker {
  readonly #backend: MarkerBackend;
  readonly #key: string;
  readonly #log: Logger;
  /** The token seen last; undefined before the first look. */
  #seen: string | null | undefined;
  #restore: (() => Promise<void>) | undefined;
  #checking: Promise<void> | null = null;

  /** @param key the marker key (`<prefix>marker`) */
  constructor(backend: MarkerBackend, key: string, log: Logger) {
    this.#backend = backend;
    this.#key = key;
    this.#log = log;
  }

  /** The token seen last (undefined before the first look, null when Redis had none). */
  get seen(): string | null | undefined {
    return this.#seen;
  }

  /** What to run when the data was lost (the last one registered). */
  onLost(restore: () => Promise<void>): void {
    this.#restore = restore;
  }

  /**
   * Reads the marker; on the first look it only sets it when absent. Concurrent calls share one check.
   * @throws when Redis fails (the next check tries again)
   */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    const now = await this.#backend.get(this.#key);
    if (this.#seen !== undefined && now === this.#seen) return;
    if (this.#seen !== undefined) {
      this.#log.warn('the session store lost its data (its marker is gone): writing back the live sessions');
      await this.#restore?.();
    }
    if (now === null) await this.#backend.setIfAbsent(this.#key, randomBytes(12).toString('base64url'));
    // Another gateway may have set it first: remember the token that holds.
    this.#seen = await this.#backend.get(this.#key);
  }
}
