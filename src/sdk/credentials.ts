/**
 * @module
 * Where the SDK gets its key: a fixed key, or a workload token exchanged for short-lived keys.
 * The workload provider re-reads the token file at every exchange (the kubelet rotates it),
 * exchanges again shortly before the key expires, and once more when the server says `key_expired`.
 */
import { readFile } from 'node:fs/promises';
import type { ExchangeJson } from './types.ts';

/** Supplies the bearer key. */
export interface KeyProvider {
  /** The key to send now. */
  key(): Promise<string>;
  /** Called when the server refused the key as expired; the next `key()` gets a fresh one. */
  invalidate(): void;
  /** Whether `invalidate` + retry can help (false for a fixed key). */
  readonly renewable: boolean;
}

/** A fixed key. */
export function staticKey(key: string): KeyProvider {
  return { key: async () => key, invalidate() {}, renewable: false };
}

/** Options for `workloadKey`. */
export interface WorkloadKeyOptions {
  url: string;
  /** Path of the projected token (e.g. `$TETHER_TOKEN_FILE`). */
  tokenFile: string;
  /** Exchange again this long before the key expires, ms. @default 60000 */
  refreshBeforeMs?: number;
  fetch: typeof fetch;
  /** Epoch ms now. @default Date.now */
  now?: () => number;
  /** Turns a failed exchange response into an error. */
  fail: (res: Response) => Promise<Error>;
}

/** Exchanges the workload token for keys, as needed. */
export function workloadKey(options: WorkloadKeyOptions): KeyProvider & { last: () => ExchangeJson | null } {
  const refreshBefore = options.refreshBeforeMs ?? 60_000;
  const now = options.now ?? Date.now;
  let current: ExchangeJson | null = null;
  let obtainedAt = 0;
  let inFlight: Promise<ExchangeJson> | null = null;

  const exchange = async (): Promise<ExchangeJson> => {
    const token = (await readFile(options.tokenFile, 'utf8')).trim();
    const res = await options.fetch(new URL('/v1/auth/kubernetes', options.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    if (!res.ok) throw await options.fail(res);
    return (await res.json()) as ExchangeJson;
  };

  return {
    renewable: true,
    last: () => current,
    async key() {
      if (current) {
        const expires = Date.parse(current.expires_at);
        // Refresh a margin before expiry, but never more than half the key's life early: a short-lived
        // key (or a token near its end) must not cause an exchange on every call.
        const margin = Math.min(refreshBefore, (expires - obtainedAt) / 2);
        if (expires - margin > now()) return current.key;
      }
      // One exchange at a time, however many calls wait for it.
      inFlight ??= exchange().finally(() => {
        inFlight = null;
      });
      const started = now();
      current = await inFlight;
      obtainedAt = started;
      return current.key;
    },
    invalidate() {
      current = null;
    },
  };
}
