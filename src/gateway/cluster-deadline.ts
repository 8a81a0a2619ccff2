/**
 * @module
 * The deadline of a request that waits on its instance's runtime (a Kubernetes claim to be bound, a Sandbox
 * to become Ready, a resume from Suspended): past it the request gets 503 + Retry-After and the gateway logs
 * what the cluster did not do (the runtime's `waitingOn`), while the start or resume itself goes on (bounded
 * by the start timeout and the runtime's own operation timeout), so a retry finds it further along.
 * Used by scheduler.ts.
 */
import { type TetherError, unavailable } from '../common/errors.ts';
import type { Logger } from '../common/log.ts';
import type { InstanceRuntime } from '../runtime/runtime.ts';
import type { InstanceEntry } from './state.ts';

/** Options of `ClusterDeadline`. */
export interface ClusterDeadlineOptions {
  /** Longest wait of one request (ms), > 0. */
  ms: number;
  runtime: InstanceRuntime;
  log: Logger;
}

/** Bounds the waits of requests on their instances. */
export class ClusterDeadline {
  readonly #o: ClusterDeadlineOptions;

  /** @throws Error when `ms` is not > 0 */
  constructor(options: ClusterDeadlineOptions) {
    if (!(options.ms > 0)) throw new Error(`Cannot bound cluster waits as 'ms' must be > 0: got ${options.ms}`);
    this.#o = options;
  }

  /**
   * `waiting`, or a 503 `unavailable` (Retry-After 1-5 s) when it has not settled within the deadline.
   * @throws {TetherError} 503 after the deadline; else what `waiting` threw
   */
  bound<T>(inst: InstanceEntry, waiting: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.#expired(inst)), this.#o.ms);
    });
    // The wait goes on after the deadline: its outcome is its own (no unhandled rejection here).
    waiting.catch(() => {});
    return Promise.race([waiting, late]).finally(() => clearTimeout(timer));
  }

  #expired(inst: InstanceEntry): TetherError {
    const seconds = Math.round(this.#o.ms / 100) / 10;
    const wait = this.#o.runtime.waitingOn?.(inst.name);
    const line = wait
      ? `${wait.what} after ${seconds} s: ${wait.hint}`
      : `instance ${inst.name} not ready after ${seconds} s`;
    this.#o.log.warn(
      { instance: inst.name, service: inst.service.config.name, waited_ms: this.#o.ms, reason: wait?.reason },
      line,
    );
    return unavailable(
      `instance ${inst.name} is still waiting on the cluster after ${seconds} s; GET /_tether/instances on the gateway admin port says why`,
      Math.min(5, Math.max(1, Math.ceil(this.#o.ms / 1000))),
    );
  }
}
