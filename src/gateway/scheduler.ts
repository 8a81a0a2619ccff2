/**
 * @module
 * Places sessions on instances. A known session goes to its instance (resumed if paused). A new one
 * takes, in order: a paused warm-pool instance, a free slot (`target` sessions per instance), a new
 * instance (claims and new instances both within `max-scale`, new ones also within the gateway-wide
 * `max-instances`, for which a paused warm instance of another service may be deleted); else it waits in a FIFO queue until a slot frees or the queue timeout
 * (503 + Retry-After). Placement is synchronous, so concurrent requests never share a slot. At a limit, an
 * instance gives way by the pressure policy (reclaim.ts), or a session of an address beyond its share
 * (address-share.ts); waiters under their share are served first.
 * Called by the proxy; `drain` runs when an instance goes away and on every reconcile pass.
 */
import type { Clock } from '../common/clock.ts';
import { isTetherError, type TetherError, unavailable } from '../common/errors.ts';
import { sessionKeyHash } from '../sessions/session-hash.ts';
import { type SessionStore, sessionId } from '../sessions/session-store.ts';
import { addressShare, nextWaiter, overShareVictim, underShare, waitersUnderShare } from './address-share.ts';
import type { ClusterDeadline } from './cluster-deadline.ts';
import { ForeignSessions } from './foreign-sessions.ts';
import type { InstancePool } from './instance-pool.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { NewSessionLimit } from './new-session-limit.ts';
import { pickReclaim } from './reclaim.ts';
import { BindRefused, type SessionTable } from './session-table.ts';
import { type InstanceEntry, type Placement, type ServiceState, type SessionEntry, servingCount } from './state.ts';

/** Options of `Scheduler`. */
export interface SchedulerOptions {
  pool: InstancePool;
  table: SessionTable;
  /** Read on a local miss when durable (another gateway may have bound the session). */
  store: SessionStore;
  clock: Clock;
  metrics: GatewayMetrics;
  /** How long a new session may wait for a slot (ms). */
  queueTimeoutMs: number;
  /** Max waiting requests per service; beyond it a new session gets 503 at once. */
  maxQueue: number;
  /** Asks for a reconcile (warm pool refill). */
  poke: () => void;
  /** New sessions per client address (issue 9 item 4). @default no limit */
  limit?: NewSessionLimit;
  /** Bounds a request's wait for its instance to start or resume (503 + Retry-After past it). @default none */
  deadline?: ClusterDeadline;
  /** `--address-share`: percent of a service's capacity one address keeps while others wait (address-share.ts). @default 50 */
  addressSharePercent?: number;
}

/** Session placement and the wait queue. */
export class Scheduler {
  readonly #o: SchedulerOptions;
  readonly #foreign: ForeignSessions;
  /** Set by `#place` when it found nothing free: a slot is on its way already. */
  #relieving = false;
  /** False until the gateway read its session store at start (503 + Retry-After meanwhile). */
  serving = true;

  constructor(options: SchedulerOptions) {
    if (!(options.queueTimeoutMs > 0)) {
      throw new Error(`Cannot schedule as 'queueTimeoutMs' must be > 0: got ${options.queueTimeoutMs}`);
    }
    if (!Number.isInteger(options.maxQueue) || options.maxQueue < 0) {
      throw new Error(`Cannot schedule as 'maxQueue' must be an integer >= 0: got ${options.maxQueue}`);
    }
    const share = options.addressSharePercent ?? 50;
    if (!Number.isInteger(share) || share < 1 || share > 100) {
      throw new Error(`Cannot schedule as 'addressSharePercent' must be an integer 1-100: got ${share}`);
    }
    this.#o = options;
    this.#foreign = new ForeignSessions(options, wentAway);
  }

  /**
   * Fast path: the session exists and its instance is running. Counts the request in flight.
   * @returns the session, or undefined when `acquire` must be used
   */
  route(svc: ServiceState, key: string): SessionEntry | undefined {
    const s = svc.byKey.get(key);
    if (s === undefined || !s.confirmed || s.instance.state !== 'running' || s.instance.resuming) return undefined;
    this.#hold(s);
    return s;
  }

  /**
   * Slow path: resumes, waits for start, places a new session or queues it. Counts the request in flight
   * (the caller must `release`).
   * @param client the client's address, for the new-sessions-per-minute limit and the address share
   * @throws {TetherError} 503 `unavailable` on queue timeout or when the instance never became ready; 429
   * `rate_limited` when `client` starts new sessions faster than the limit
   */
  async acquire(svc: ServiceState, key: string, signal: AbortSignal, client?: string): Promise<SessionEntry> {
    if (!this.serving) throw unavailable('the gateway is starting: its session store is not read yet', 1);
    for (let attempt = 0; attempt < 3; attempt++) {
      const s =
        this.#known(svc, key) ??
        // Only a durable store is read here: in memory mode placement stays synchronous (queued at once).
        (this.#o.store.durable ? await this.#foreign.find(svc, key, signal) : undefined) ??
        (await this.#placeOnce(svc, key, signal, client, attempt === 0));
      this.#hold(s);
      try {
        await s.bound;
      } catch (err) {
        this.release(s);
        if (err instanceof BindRefused) continue; // another binding holds: find it, or place again
        throw isTetherError(err) ? err : unavailable('the session store failed', 1);
      }
      try {
        const ready = this.#ready(s.instance);
        await (this.#o.deadline ? this.#o.deadline.bound(s.instance, ready) : ready);
      } catch (err) {
        this.release(s);
        throw isTetherError(err) ? err : unavailable(notReady(s.instance.name), 1);
      }
      if (s.live && (s.instance.foreign || s.instance.state === 'running')) return s;
      this.release(s); // ended while we waited: place again
    }
    throw unavailable('instance went away while starting', 1);
  }

  /** Ends one in-flight request of `s`. */
  release(s: SessionEntry): void {
    s.inflight--;
    s.instance.inflight--;
    s.lastActive = this.#o.clock.now();
    if (s.instance.foreign) this.#foreign.touch(s);
  }

  /** See `ForeignSessions.touchBusy` (called on every reconcile pass). */
  touchBusyForeign(svc: ServiceState): void {
    this.#foreign.touchBusy(svc);
  }

  /** Serves queued waiters while slots are free (FIFO, those under their address share first). */
  drain(svc: ServiceState): void {
    while (svc.queue.length > 0) {
      const at = nextWaiter(svc, this.#share(svc));
      const next = svc.queue[at]!;
      const s = svc.byKey.get(next.key) ?? this.#place(svc, next.key, next.client);
      if (!s) {
        if (!this.#relieving) this.#shareFairly(svc, next.client);
        return;
      }
      next.resolve(s); // leaves the queue
    }
  }

  /** Rejects every waiter (shutdown, or the service removed by a reload). */
  rejectAll(svc: ServiceState, reason = 'gateway is shutting down'): void {
    for (const w of svc.queue.splice(0)) w.reject(unavailable(reason, 1));
  }

  /** This gateway's session of `key`; a rehydrated one (known by id only) learns its key here. */
  #known(svc: ServiceState, key: string): SessionEntry | undefined {
    const s = svc.byKey.get(key);
    if (s !== undefined || svc.sessions.size === svc.byKey.size) return s;
    const byId = svc.sessions.get(sessionId(key));
    if (byId !== undefined) this.#o.table.learnKey(svc, byId, key);
    return byId;
  }

  #hold(s: SessionEntry): void {
    s.requests++;
    s.inflight++;
    s.instance.inflight++;
    s.lastActive = this.#o.clock.now();
  }

  #placeOnce(
    svc: ServiceState,
    key: string,
    signal: AbortSignal,
    client: string | undefined,
    first: boolean,
  ): Promise<SessionEntry> {
    // Placed by a concurrent request of the same key while this one read the store.
    const known = svc.byKey.get(key);
    if (known !== undefined) return Promise.resolve(known);
    let p = svc.placing.get(key);
    if (!p) {
      // A new session (the requests of one key waiting for one placement count once).
      try {
        if (first) this.#o.limit?.take(client);
      } catch (err) {
        return Promise.reject(err);
      }
      const placed = this.#place(svc, key, client);
      if (placed) return Promise.resolve(placed);
      if (svc.queue.length >= this.#o.maxQueue) {
        this.#o.metrics.queueTimeouts.inc({ service: svc.config.name });
        return Promise.reject(unavailable(`the queue of ${svc.config.name} is full (${this.#o.maxQueue} waiting)`, 1));
      }
      const queued = this.#enqueue(svc, key, client);
      svc.placing.set(key, queued);
      const clear = () => {
        if (svc.placing.get(key) === queued) svc.placing.delete(key);
      };
      queued.promise.then(clear, clear);
      p = queued;
      // Queued first, so that a slot freed for it goes to it.
      if (!this.#relieving) this.#shareFairly(svc, client);
    }
    return follow(p, signal);
  }

  /**
   * Synchronous placement of a new session, or undefined when nothing is free (then `#relieving` tells whether
   * a slot is on its way: an instance given up by the pressure policy, or one already leaving).
   */
  #place(svc: ServiceState, key: string, client: string | undefined): SessionEntry | undefined {
    this.#relieving = false;
    const cfg = svc.config;
    // max-scale bounds the instances serving sessions; a claimed warm instance becomes one of them.
    const room = cfg.maxScale === 0 || servingCount(svc) < cfg.maxScale;
    let free: InstanceEntry | undefined;
    for (const i of svc.instances.values()) {
      if (i.warm) {
        // Paused as it should be, or running because its pause failed (it is never paused again: serve it).
        if (room && (i.state === 'paused' || (i.state === 'running' && !i.resuming))) {
          i.warm = false;
          this.#o.metrics.warmClaims.inc({ service: cfg.name });
          // Refill soon, but after this request: spawning blocks the event loop for a few ms.
          setTimeout(this.#o.poke, 25).unref();
          return this.#o.table.bind(svc, i, key, { fromWarm: true, client });
        }
      } else if (i.state !== 'stopping' && !i.retired && i.sessions.size < cfg.target) {
        if (free === undefined || (free.state !== 'running' && i.state === 'running')) free = i;
      }
    }
    if (free) return this.#o.table.bind(svc, free, key, { client });
    if (!room) {
      this.#relieving = this.#reclaim(svc.instances.values(), svc);
      return undefined;
    }
    // max-instances bounds every instance of the gateway; at the cap, a warm one elsewhere may give way.
    if (this.#o.pool.free() > 0) {
      // With target 1 the instance is this session's alone: a Kubernetes claim is named and labelled for it.
      const session =
        cfg.target === 1
          ? {
              claim: this.#o.table.claimOf(svc, key),
              keyHash: sessionKeyHash(key),
              expiresAt: this.#o.table.expiryOf(svc),
            }
          : undefined;
      return this.#o.table.bind(svc, this.#o.pool.start(svc, false, session), key, { client });
    }
    this.#relieving = this.#o.pool.makeRoom() || this.#reclaim(this.#o.pool.all(), svc);
    return undefined;
  }

  #share(svc: ServiceState): number {
    return addressShare(svc, this.#o.pool.maxInstances, this.#o.addressSharePercent ?? 50);
  }

  /** For a timed-out waiter whose address holds its share already: says so (it was served after the others). */
  #atShare(svc: ServiceState, client: string | undefined): string {
    const share = this.#share(svc);
    const held = client === undefined ? 0 : (svc.clients.get(client) ?? 0);
    if (share === Number.POSITIVE_INFINITY || held < share || svc.clients.size < 2) return '';
    return `; this address holds ${held} live sessions of ${svc.config.name}, its share while other addresses wait is ${share}`;
  }

  /**
   * A new session of an address under its share waits (it is queued): one session of the address furthest beyond
   * its share ends (its WebSockets are closed) so the freed slot goes to a waiter under its share — unless
   * enough slots are already on their way (instances stopping) for every such waiter.
   */
  #shareFairly(svc: ServiceState, client: string | undefined): void {
    const share = this.#share(svc);
    if (!underShare(svc, client, share)) return;
    let leaving = 0;
    for (const i of svc.instances.values()) if (i.state === 'stopping') leaving++;
    if (leaving >= waitersUnderShare(svc, share)) return;
    const victim = overShareVictim(svc, share);
    if (victim === undefined) return;
    this.#o.metrics.reclaims.inc({ service: svc.config.name });
    this.#o.table.end(victim, 'over_share');
  }

  /**
   * At a limit with sessions waiting, ends the sessions of one instance the pressure policy gives up (reclaim.ts):
   * one that never sent a second request first, else the least recently used paused one. Its deletion frees the
   * slot; the queue is drained when it is gone. Nothing is reclaimed while enough instances are already leaving.
   * @returns false when nothing gave way nor was leaving already
   */
  #reclaim(candidates: Iterable<InstanceEntry>, svc: ServiceState): boolean {
    let leaving = 0;
    for (const i of svc.instances.values()) if (i.state === 'stopping') leaving++;
    if (leaving > svc.queue.length) return true;
    const victim = pickReclaim(candidates);
    if (victim === undefined) return false;
    this.#o.metrics.reclaims.inc({ service: victim.service.config.name });
    for (const s of [...victim.sessions]) this.#o.table.end(s, 'reclaimed');
    return true;
  }

  /** Queues one waiter for `key`; its requests follow it with `follow`. */
  #enqueue(svc: ServiceState, key: string, client: string | undefined): Placement {
    let cancel!: () => void;
    const promise = new Promise<SessionEntry>((resolve, reject) => {
      const timeoutMs = this.#o.queueTimeoutMs;
      const leave = () => {
        clearTimeout(timer);
        const at = svc.queue.indexOf(waiter);
        if (at >= 0) svc.queue.splice(at, 1);
      };
      const waiter = {
        key,
        client,
        resolve: (s: SessionEntry) => {
          leave();
          resolve(s);
        },
        reject: (err: TetherError) => {
          leave();
          reject(err);
        },
      };
      cancel = () => waiter.reject(wentAway());
      const timer = setTimeout(() => {
        this.#o.metrics.queueTimeouts.inc({ service: svc.config.name });
        waiter.reject(
          unavailable(
            `no instance of ${svc.config.name} became free within ${timeoutMs} ms ` +
              `(max-scale ${svc.config.maxScale}, max-instances ${this.#o.pool.maxInstances})${this.#atShare(svc, client)}`,
            Math.min(5, Math.max(1, Math.ceil(timeoutMs / 1000))),
          ),
        );
      }, timeoutMs);
      svc.queue.push(waiter);
    });
    promise.catch(() => {}); // cancelled when nobody waits any more
    return { promise, interested: 0, cancel };
  }

  async #ready(inst: InstanceEntry): Promise<void> {
    await inst.ready; // rejects when the start failed, even if that is already known

    if (inst.state === 'paused' || inst.state === 'pausing') await this.#o.pool.resume(inst);
    else if (inst.resuming) await inst.resuming;
  }
}

/** The 503 message of a failed start: where its output is (never the output itself: it is the operator's). */
function notReady(instance: string): string {
  return `instance ${instance} did not become ready; its output: GET /_tether/instances/${instance}/logs on the gateway admin port`;
}

/** 503 for a request whose client left while it waited (it is rarely read, but always well-formed). */
function wentAway(): TetherError {
  return unavailable('client went away while waiting', 1);
}

/**
 * Waits for a shared placement as one request: its own `signal` ends only its own wait; the
 * placement is cancelled (leaves the queue) when the last interested request has gone.
 */
function follow(p: Placement, signal: AbortSignal): Promise<SessionEntry> {
  if (signal.aborted) {
    if (p.interested === 0) p.cancel();
    return Promise.reject(wentAway());
  }
  p.interested++;
  return new Promise<SessionEntry>((resolve, reject) => {
    let done = false;
    const settle = () => {
      if (done) return false;
      done = true;
      signal.removeEventListener('abort', onAbort);
      p.interested--;
      return true;
    };
    const onAbort = () => {
      if (!settle()) return;
      if (p.interested === 0) p.cancel();
      reject(wentAway());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.promise.then(
      (s) => {
        if (settle()) resolve(s);
      },
      (err: unknown) => {
        if (settle()) reject(err);
      },
    );
  });
}
