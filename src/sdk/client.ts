/**
 * @module
 * The TypeScript client agents use: typed methods for every memory call, with the key from a fixed
 * key or a workload token. Errors arrive as `TetherError` with the server's code and status.
 * Imports only `common/`; no server code.
 *
 * @example
 * ```ts
 * const memory = TetherClient.fromWorkloadToken({ url: process.env.TETHER_URL!, tokenFile: process.env.TETHER_TOKEN_FILE! });
 * await memory.remember({ subject: 'user', predicate: 'prefers', value: 'dark mode' });
 * const { beliefs } = await memory.recall({ q: 'dark' });
 * ```
 */
import { ERROR_STATUS, type ErrorCode, TetherError } from '../common/errors.ts';
import { AgentHandle, type Every } from './agent-handle.ts';
import type { CheckpointJson, CheckpointKeyJson, CheckpointQueryInput, PendingWriteJson } from './checkpoint-types.ts';
import { type KeyProvider, staticKey, workloadKey } from './credentials.ts';
import type { LeaseJson, ResumeJson } from './resume-types.ts';
import type {
  BeliefJson,
  EventJson,
  HistoryOptions,
  PredicateJson,
  RecallInput,
  RememberResultJson,
  StatementInput,
  WhoamiJson,
} from './types.ts';

/** Options shared by the constructors. */
export interface ClientOptions {
  /** Memory server URL, e.g. `http://tether-memory.tether:8080`. */
  url: string;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** The wire code a bare status stands for (the first code listed with that status). */
const STATUS_CODES: Record<number, ErrorCode> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'too_large',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal',
  502: 'bad_gateway',
  503: 'unavailable',
};

/** Turns an error response into a `TetherError`. */
export async function errorOf(res: Response): Promise<TetherError> {
  const text = await res.text();
  // Without a wire error in the body (a proxy's page, say), the status says what kind it is.
  let code: ErrorCode = STATUS_CODES[res.status] ?? (res.status >= 500 ? 'unavailable' : 'invalid_request');
  let message = text.slice(0, 500) || res.statusText;
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.code && body.error.code in ERROR_STATUS) code = body.error.code as ErrorCode;
    if (body.error?.message) message = body.error.message;
  } catch {}
  const retry = res.headers.get('retry-after');
  return new TetherError(code, message, retry ? { retryAfter: Number(retry) } : {});
}

/** A memory server client. */
export class TetherClient {
  readonly url: string;
  readonly #fetch: typeof fetch;
  readonly #keys: KeyProvider;

  private constructor(url: string, keys: KeyProvider, f: typeof fetch) {
    this.url = url;
    this.#keys = keys;
    this.#fetch = f;
  }

  /** A client with a fixed key. */
  static fromKey(options: ClientOptions & { key: string }): TetherClient {
    return new TetherClient(options.url, staticKey(options.key), options.fetch ?? fetch);
  }

  /**
   * A client that exchanges a projected workload token for short-lived keys, re-reading `tokenFile`
   * at each exchange and exchanging again before the key expires or once on `key_expired`.
   */
  static fromWorkloadToken(
    options: ClientOptions & { tokenFile: string; refreshBeforeMs?: number; now?: () => number },
  ): TetherClient {
    const f = options.fetch ?? fetch;
    const keys = workloadKey({
      url: options.url,
      tokenFile: options.tokenFile,
      refreshBeforeMs: options.refreshBeforeMs,
      fetch: f,
      fail: errorOf,
      now: options.now,
    });
    return new TetherClient(options.url, keys, f);
  }

  async #call<T>(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<T> {
    const res = await this.#send(method, path, body, extra);
    return (res.status === 204 ? undefined : await res.json()) as T;
  }

  /** Sends with the current key; exchanges again once on `key_expired` (a renewable key). @throws {TetherError} */
  async #send(method: string, path: string, body?: unknown, extra?: Record<string, string>): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const key = await this.#keys.key();
      const res = await this.#fetch(new URL(path, this.url), {
        method,
        headers: {
          ...extra,
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.ok) return res;
      const err = await errorOf(res);
      if (err.code === 'key_expired' && this.#keys.renewable && attempt === 0) {
        this.#keys.invalidate();
        continue;
      }
      throw err;
    }
  }

  /** What the current key is. */
  whoami(): Promise<WhoamiJson> {
    return this.#call('GET', '/v1/whoami');
  }

  /** Remembers one fact. */
  remember(statement: StatementInput & { namespace?: string }): Promise<RememberResultJson> {
    return this.#call('POST', '/v1/memories', statement);
  }

  /** Remembers a batch, validated whole before any write. */
  rememberAll(statements: StatementInput[], namespace?: string): Promise<{ results: RememberResultJson[] }> {
    return this.#call('POST', '/v1/memories', { statements, ...(namespace ? { namespace } : {}) });
  }

  /** Recalls beliefs by subject/predicate or text search. */
  recall(query: RecallInput = {}): Promise<{ beliefs: BeliefJson[] }> {
    return this.#call('GET', `/v1/memories?${queryString(query)}`);
  }

  /**
   * One page of the events of one subject/predicate, oldest first: at most `limit` (default 100, at
   * most 1000) and `next`, the `cursor` of the page after (null on the last page).
   * @param options a namespace (text), or the namespace, page size and cursor
   * @example
   * let page = await client.history('alice', 'note', { limit: 1000 });
   * while (page.next) page = await client.history('alice', 'note', { limit: 1000, cursor: page.next });
   */
  history(
    subject: string,
    predicate: string,
    options: string | HistoryOptions = {},
  ): Promise<{ events: EventJson[]; next: string | null }> {
    const o = typeof options === 'string' ? { namespace: options } : options;
    return this.#call('GET', `/v1/memories/history?${queryString({ subject, predicate, ...o })}`);
  }

  /**
   * Every event of one subject/predicate, oldest first, page by page (`history` following `next`).
   * @example
   * for await (const e of client.historyAll('alice', 'note')) console.log(e.value);
   */
  async *historyAll(
    subject: string,
    predicate: string,
    options: Omit<HistoryOptions, 'cursor'> = {},
  ): AsyncGenerator<EventJson> {
    let cursor: string | undefined;
    do {
      const page = await this.history(subject, predicate, { limit: 1000, ...options, cursor });
      yield* page.events;
      cursor = page.next ?? undefined;
    } while (cursor !== undefined);
  }

  /** Retracts one value, or all when `value` is omitted. */
  forget(target: {
    subject: string;
    predicate: string;
    value?: string | number | boolean;
    namespace?: string;
  }): Promise<{ withdrawn: number }> {
    return this.#call('POST', '/v1/memories/forget', target);
  }

  /** The predicates in force. */
  registry(): Promise<{ tenant: string; predicates: PredicateJson[] }> {
    return this.#call('GET', '/v1/registry');
  }

  /**
   * Resumes this agent: takes its lease (waiting up to `waitMs` while another holder's lease is
   * live) and returns a handle that renews it every TTL/3, stamps its epoch on every write and stops
   * writing once it is lost (`lost` event; writes reject with `lease_lost`).
   * @throws {TetherError} 409 `lease_held` when the lease stays held past `waitMs`
   * @example
   * const agent = await client.resume({ holder: 'worker-1', waitMs: 120_000 });
   * console.log(agent.resumed.working_state.step);
   */
  async resume(options: ResumeOptions = {}): Promise<AgentHandle> {
    const ttlMs = options.ttlMs ?? 60_000;
    const body = {
      namespace: options.namespace,
      holder: options.holder,
      lease_ttl_ms: ttlMs,
      token_budget: options.tokenBudget,
    };
    const now = options.now ?? Date.now;
    const deadline = now() + (options.waitMs ?? 0);
    for (;;) {
      const startedAt = now();
      try {
        const resumed = await this.#call<ResumeJson>('POST', '/v1/resume', body);
        const call = <T>(m: string, p: string, b?: unknown, h?: Record<string, string>) => this.#call<T>(m, p, b, h);
        return new AgentHandle({ resumed, ttlMs, call, startedAt, every: options.every, now });
      } catch (err) {
        const left = deadline - now();
        if (!(err instanceof TetherError && err.code === 'lease_held') || left <= 0) throw err;
        await new Promise((r) => setTimeout(r, Math.min(options.pollMs ?? 1000, left)));
      }
    }
  }

  /** Reads the resume context without taking the lease (`defer`). */
  peekResume(options: { namespace?: string; tokenBudget?: number } = {}): Promise<ResumeJson> {
    return this.#call('POST', '/v1/resume', {
      namespace: options.namespace,
      token_budget: options.tokenBudget,
      defer: true,
    });
  }

  /** Who holds the lease now. */
  lease(namespace?: string): Promise<LeaseJson> {
    return this.#call('GET', `/v1/lease?${queryString({ namespace })}`);
  }

  /** LangGraph checkpoints with their pending writes, a page at a time (`next_cursor` for the next). */
  checkpoints(
    query: CheckpointQueryInput = {},
  ): Promise<{ checkpoints: CheckpointJson[]; next_cursor: string | null }> {
    return this.#call('GET', `/v1/checkpoints?${queryString(query)}`);
  }

  /** The pending writes of one checkpoint. */
  checkpointWrites(key: CheckpointKeyJson & { namespace?: string }): Promise<{ pending_writes: PendingWriteJson[] }> {
    return this.#call('GET', `/v1/checkpoints/writes?${queryString(key)}`);
  }

  /** Exports events (NDJSON lines parsed). */
  async exportEvents(options: { namespace?: string; since?: string } = {}): Promise<EventJson[]> {
    const res = await this.#send('GET', `/v1/events?${queryString(options)}`);
    // An export also carries registry version lines (for an import to restore): events only here.
    return (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as EventJson | { registry_version: unknown })
      .filter((l): l is EventJson => !('registry_version' in l));
  }
}

/** Options of `TetherClient.resume`. */
export interface ResumeOptions {
  /** Default: the key's own. */
  namespace?: string;
  /** Lease holder name. @default the key's session (pod or instance), else `key:<id>` */
  holder?: string;
  /** Lease life, ms (1000..3600000). @default 60000 */
  ttlMs?: number;
  /** Briefing budget, estimated tokens. @default 8000 */
  tokenBudget?: number;
  /** Keep trying this long while another holder's lease is live, ms. @default 0 */
  waitMs?: number;
  /** Pause between tries while waiting, ms. @default 1000 */
  pollMs?: number;
  /** The renew timer (tests inject one). @default an unref'd setInterval */
  every?: Every;
  /** Local epoch ms, for the handle's own lapse check. @default Date.now */
  now?: () => number;
}

function queryString(q: object): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null) params.set(k, String(v));
  return params.toString();
}
