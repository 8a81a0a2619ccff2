/**
 * @module
 * The agent handle `TetherClient.resume()` returns: it holds the lease, renews it in the background
 * (every TTL/3), stamps its epoch (`X-Lease-Epoch`) on every resume write, and stops writing at once
 * when the lease is lost — every later write rejects with `lease_lost` without a request, and a
 * `lost` event says so. `release()` ends it. Imports only `common/` and the SDK's own types.
 */
import { EventEmitter } from 'node:events';
import { TetherError } from '../common/errors.ts';
import type { CheckpointInput, CheckpointWritesInput } from './checkpoint-types.ts';
import type {
  LeaseJson,
  MilestoneJson,
  OutputInfoJson,
  OutputJson,
  PointerInput,
  PointerJson,
  RecordTurnJson,
  ResumeJson,
  TurnInput,
  TurnJson,
  WorkingStateJson,
  WorkingStatePatch,
} from './resume-types.ts';

/** How the handle reaches the server (the client's authenticated call). */
export type HandleCall = <T>(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<T>;

/** Runs `fn` every `ms`; returns a stop function. Injectable so tests move time by hand. */
export type Every = (ms: number, fn: () => void) => () => void;

/** The real timer: an unref'd interval, so a renewing handle never keeps a process alive. */
export const realEvery: Every = (ms, fn) => {
  const t = setInterval(fn, ms);
  t.unref();
  return () => clearInterval(t);
};

/** Events of an `AgentHandle`. */
export interface AgentHandleEvents {
  /** The lease is lost (a later epoch, a lapse, or a renew that kept failing past the expiry): writes stop. */
  lost: [error: TetherError];
  /** A background renew succeeded. */
  renewed: [lease: LeaseJson];
}

/**
 * An agent resumed under its lease. Every write method rejects with `TetherError` code `lease_lost`
 * once the lease is lost; listen to `lost` to hear it as it happens.
 * @example
 * const agent = await client.resume({ holder: 'pod-7' });
 * agent.on('lost', (err) => console.error('stopped writing:', err.message));
 * console.log(agent.resumed.briefing);
 * await agent.recordTurn({ role: 'assistant', content: 'step 3 done' });
 * await agent.release();
 */
export class AgentHandle extends EventEmitter<AgentHandleEvents> {
  /** The resume answer the handle started from (working state, turns, briefing…). */
  readonly resumed: ResumeJson;
  readonly namespace: string;
  /** The lease epoch stamped on every write. */
  readonly epoch: number;
  readonly #call: HandleCall;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #expiresAt: number;
  #lost: TetherError | null = null;
  #released = false;
  #stop: () => void;

  /**
   * @param options.startedAt local epoch ms when the resume request was sent: the lease is taken as
   *   lapsing at `startedAt + ttlMs` (never later than the server's expiry, whatever the clock skew)
   */
  constructor(options: {
    resumed: ResumeJson;
    ttlMs: number;
    call: HandleCall;
    startedAt: number;
    every?: Every;
    now?: () => number;
  }) {
    super();
    const { resumed } = options;
    if (resumed.epoch === null) throw new Error('Cannot make an agent handle of a deferred resume: it took no lease');
    this.resumed = resumed;
    this.namespace = resumed.namespace;
    this.epoch = resumed.epoch;
    this.#call = options.call;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
    this.#expiresAt = options.startedAt + options.ttlMs;
    this.#stop = (options.every ?? realEvery)(
      Math.max(1, Math.floor(options.ttlMs / 3)),
      () => void this.renew().catch(() => {}),
    );
  }

  /** The error that ended the lease, or null while it is held. */
  get lost(): TetherError | null {
    return this.#lost;
  }

  /** Marks the lease lost (once): stops renewing and tells `lost` listeners. */
  #lose(err: TetherError): TetherError {
    if (this.#lost) return this.#lost;
    this.#lost = err;
    this.#stop();
    if (this.listenerCount('lost') > 0) this.emit('lost', err);
    return err;
  }

  /** The rejection for a write after the lease ended. */
  #ended(): TetherError {
    if (this.#lost) return this.#lost;
    return new TetherError('lease_lost', `the lease of epoch ${this.epoch} was released: this handle writes no more`);
  }

  /** A fenced write: stamped with the epoch; refused locally once the lease is lost or lapsed. */
  async #write<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (this.#lost || this.#released) throw this.#ended();
    if (this.#now() >= this.#expiresAt) {
      throw this.#lose(new TetherError('lease_lost', `the lease of epoch ${this.epoch} lapsed without a renew`));
    }
    try {
      return await this.#call<T>(method, path, body, { 'x-lease-epoch': String(this.epoch) });
    } catch (err) {
      if (err instanceof TetherError && (err.code === 'lease_lost' || err.code === 'lease_not_held'))
        throw this.#lose(err);
      throw err;
    }
  }

  /**
   * Renews now (the background timer calls this every TTL/3). A refusal loses the lease; a network
   * failure is retried at the next tick until the lease would have lapsed.
   */
  async renew(): Promise<LeaseJson> {
    if (this.#lost || this.#released) throw this.#ended();
    const sentAt = this.#now();
    try {
      const lease = await this.#call<LeaseJson>('POST', '/v1/lease/renew', {
        namespace: this.namespace,
        epoch: this.epoch,
        ttl_ms: this.#ttlMs,
      });
      this.#expiresAt = sentAt + this.#ttlMs;
      this.emit('renewed', lease);
      return lease;
    } catch (err) {
      if (err instanceof TetherError && (err.code === 'lease_lost' || err.code === 'lease_not_held'))
        throw this.#lose(err);
      if (this.#now() >= this.#expiresAt) {
        throw this.#lose(
          new TetherError('lease_lost', `the lease of epoch ${this.epoch} lapsed: renewing failed (${String(err)})`),
        );
      }
      throw err;
    }
  }

  /** Ends the lease now; later writes reject. Safe to call twice. */
  async release(): Promise<void> {
    if (this.#released || this.#lost) return;
    this.#released = true;
    this.#stop();
    try {
      await this.#call('POST', '/v1/lease/release', { namespace: this.namespace, epoch: this.epoch });
    } catch (err) {
      if (!(err instanceof TetherError && (err.code === 'lease_lost' || err.code === 'lease_not_held'))) throw err;
    }
  }

  /** Merges the named fields into the working state (a new version). */
  updateWorkingState(patch: WorkingStatePatch): Promise<WorkingStateJson> {
    return this.#write('PATCH', '/v1/working-state', { namespace: this.namespace, ...patch });
  }

  /** Records a milestone (sets `last_milestone`, and `progress` when given). */
  milestone(name: string, progress?: string): Promise<{ milestone: MilestoneJson; working_state: WorkingStateJson }> {
    return this.#write('POST', '/v1/milestones', { namespace: this.namespace, name, progress });
  }

  /** Records a turn; a repeated `message_id` answers the first seq with `duplicate: true`. */
  recordTurn(turn: TurnInput): Promise<RecordTurnJson> {
    return this.#write('POST', '/v1/turns', { namespace: this.namespace, ...turn });
  }

  /** Stores an output (<= 1 MiB) by reference. */
  storeOutput(output: { content: string; tool?: string; summary?: string }): Promise<OutputInfoJson> {
    return this.#write('POST', '/v1/outputs', { namespace: this.namespace, ...output });
  }

  /** Sets a pointer to where the work lives. */
  setPointer(name: string, pointer: PointerInput): Promise<PointerJson> {
    return this.#write('PUT', `/v1/pointers/${encodeURIComponent(name)}`, { namespace: this.namespace, ...pointer });
  }

  /** Removes a pointer (404 `not_found` when there is none). */
  async removePointer(name: string): Promise<void> {
    await this.#write('DELETE', `/v1/pointers/${encodeURIComponent(name)}?namespace=${this.namespace}`);
  }

  /** Stores a LangGraph checkpoint (fenced; one of the same key is replaced). */
  putCheckpoint(checkpoint: CheckpointInput): Promise<{ checkpoint_id: string; epoch: number }> {
    return this.#write('PUT', '/v1/checkpoints', { namespace: this.namespace, ...checkpoint });
  }

  /** Stores a task's pending writes against a checkpoint (fenced). */
  putCheckpointWrites(writes: CheckpointWritesInput): Promise<{ stored: number }> {
    return this.#write('POST', '/v1/checkpoints/writes', { namespace: this.namespace, ...writes });
  }

  /** Deletes a thread's checkpoints and pending writes, every checkpoint_ns (fenced). */
  deleteCheckpointThread(threadId: string): Promise<{ deleted: number }> {
    const q = new URLSearchParams({ namespace: this.namespace, thread_id: threadId });
    return this.#write('DELETE', `/v1/checkpoints?${q}`);
  }

  workingState(): Promise<WorkingStateJson> {
    return this.#call('GET', `/v1/working-state?namespace=${this.namespace}`);
  }

  /** Earlier versions, newest first; pass the answer's `next` as `beforeVersion` for the page after. */
  workingStateHistory(
    limit = 20,
    beforeVersion?: number,
  ): Promise<{ versions: WorkingStateJson[]; next: number | null }> {
    return this.#call('GET', `/v1/working-state/history?${this.#query({ limit, before_version: beforeVersion })}`);
  }

  /** Milestones, oldest first within the page; pass `next` as `beforeSeq` for the page before. */
  milestones(limit = 100, beforeSeq?: number): Promise<{ milestones: MilestoneJson[]; next: number | null }> {
    return this.#call('GET', `/v1/milestones?${this.#query({ limit, before_seq: beforeSeq })}`);
  }

  /** Turns, oldest first within the page; pass `next` as `beforeSeq` for the page before. */
  turns(limit = 100, beforeSeq?: number): Promise<{ turns: TurnJson[]; total: number; next: number | null }> {
    return this.#call('GET', `/v1/turns?${this.#query({ limit, before_seq: beforeSeq })}`);
  }

  output(ref: string): Promise<OutputJson> {
    return this.#call('GET', `/v1/outputs/${encodeURIComponent(ref)}?namespace=${this.namespace}`);
  }

  /** Outputs without content, newest first; pass `next` as `before` for the page after. */
  outputs(limit = 100, before?: string): Promise<{ outputs: OutputInfoJson[]; next: string | null }> {
    return this.#call('GET', `/v1/outputs?${this.#query({ limit, before })}`);
  }

  /** Pointers by name; pass `next` as `after` for the page after. */
  pointers(limit = 100, after?: string): Promise<{ pointers: PointerJson[]; next: string | null }> {
    return this.#call('GET', `/v1/pointers?${this.#query({ limit, after })}`);
  }

  /** The query string of a list call in this handle's namespace (absent values left out). */
  #query(q: Record<string, string | number | undefined>): string {
    const params = new URLSearchParams({ namespace: this.namespace });
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
    return params.toString();
  }
}
