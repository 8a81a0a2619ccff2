/**
 * @module
 * A budget of request body bytes in work at once (issue 9, item 9). What grows under write load is
 * the requests in flight: each batch of statements is held, parsed, validated and answered (about
 * 40x its JSON size in heap) until its group commit, so 32 clients sending 500-statement batches took
 * the peak RSS from 250 to 380 MB (266 MB with this budget at 512 KiB). A request with a body waits (FIFO, before its body is read: the
 * socket is paused, so the bytes stay in the kernel) until the bytes in work leave room for it; one
 * larger than the budget runs alone. Past `maxWaiting` waiters: 503 + `Retry-After`. A request whose
 * connection closes while it waits leaves the queue; one that is gone by the time it is admitted gives
 * its room back at once. A route marked `config: { bodyBudget: 'alone' }` (the admin's import) is
 * admitted in a lane of its own instead, one request at a time: a 1 MiB import no longer holds every
 * tenant's writes until it is answered. Installed by `app.ts`.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { unavailable } from '../common/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'alone': this route's requests wait for room in a lane of their own, one at a time, beside the
     * shared budget rather than in it (bodies in work: the shared budget plus one such request).
     */
    bodyBudget?: 'alone';
  }
}

/** Options of `BodyBudget`. */
export interface BodyBudgetOptions {
  /** Body bytes in work at once. @default 512 KiB */
  maxBytes?: number;
  /** Requests waiting for room; past it 503. @default 1000 */
  maxWaiting?: number;
}

/** A request waiting for room; `admitted` once its bytes were counted in. */
interface Waiter {
  bytes: number;
  admitted: boolean;
  admit: () => void;
}

/** Admits requests by the size of their bodies. */
export class BodyBudget {
  readonly #max: number;
  readonly #maxWaiting: number;
  #inWork = 0;
  #running = 0;
  readonly #waiting: Waiter[] = [];

  constructor(options: BodyBudgetOptions = {}) {
    this.#max = options.maxBytes ?? 512 * 1024;
    this.#maxWaiting = options.maxWaiting ?? 1000;
    if (!(this.#max > 0)) throw new Error(`Cannot make a body budget as 'maxBytes' must be > 0: got ${this.#max}`);
  }

  /** Bytes of the bodies in work now. */
  get inWork(): number {
    return this.#inWork;
  }

  /** Requests waiting for room now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Waits for room for `bytes`, then counts them in; call the returned function (once is enough)
   * when the request is done. When `signal` aborts while waiting, the wait ends (rejects with the
   * signal's reason) and nothing is counted in.
   * @throws {TetherError} 503 `unavailable` when `maxWaiting` requests already wait
   */
  async acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const now = this.tryAcquire(bytes);
    if (now) return now;
    if (this.#waiting.length >= this.#maxWaiting) throw unavailable('too many large requests at once; retry', 1);
    await this.#wait(bytes, signal);
    return this.#releaser(bytes);
  }

  /**
   * Counts `bytes` in at once when they fit and nobody waits, returning the release; else null and
   * nothing counted (then `acquire`, which queues). The common case, without a promise or a signal.
   */
  tryAcquire(bytes: number): (() => void) | null {
    if (this.#waiting.length > 0 || !this.#fits(bytes)) return null;
    this.#take(bytes);
    return this.#releaser(bytes);
  }

  #releaser(bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inWork -= bytes;
      this.#running--;
      this.#admitWaiting();
    };
  }

  #wait(bytes: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { bytes, admitted: false, admit: resolve };
      const leave = () => {
        if (waiter.admitted) return; // already counted in: the caller releases
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        reject(signal?.reason);
        // A large waiter at the head may have held back smaller ones that fit now.
        this.#admitWaiting();
      };
      waiter.admit = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      signal?.addEventListener('abort', leave, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #fits(bytes: number): boolean {
    return this.#running === 0 || this.#inWork + bytes <= this.#max;
  }

  #take(bytes: number): void {
    this.#inWork += bytes;
    this.#running++;
  }

  #admitWaiting(): void {
    for (let next = this.#waiting[0]; next && this.#fits(next.bytes); next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#take(next.bytes);
      next.admitted = true;
      next.admit();
    }
  }
}

/** Bodies from this size wait at most `waitLimitMs` (see `installBodyBudget`): about a socket's buffer. */
export const LIMITED_FROM_BYTES = 64 * 1024;

/**
 * Makes every request with a body (by Content-Length; a chunked one counts as `chunkedBytes`) wait
 * for room in `budget` after its key was checked, until its answer is sent or it is aborted. A route
 * whose config says `bodyBudget: 'alone'` waits in `alone` instead (its own lane; default: one request at a time).
 * @param waitLimitMs longest wait for room of a body over `LIMITED_FROM_BYTES` (0: none), then 503 +
 * Retry-After: the request timeout counts from the request's first byte, and such a body stays unread
 * in the socket while it waits, so a client that sent it whole at once would get a 408 for the server's
 * own backlog. A smaller body arrives with its head and is read whole however long it waits.
 */
export function installBodyBudget(
  app: FastifyInstance,
  budget: BodyBudget,
  chunkedBytes: number,
  waitLimitMs = 0,
  alone: BodyBudget = new BodyBudget({ maxBytes: 1 }),
): void {
  const releases = new WeakMap<FastifyRequest, () => void>();
  const done = async (req: FastifyRequest) => {
    releases.get(req)?.();
  };
  app.addHook('onRequest', async function bodyBudget(req, reply) {
    const length = Number(req.headers['content-length'] ?? 0);
    const bytes = req.headers['transfer-encoding'] !== undefined ? chunkedBytes : Number.isFinite(length) ? length : 0;
    if (bytes <= 0) return;
    const lane = req.routeOptions.config?.bodyBudget === 'alone' ? alone : budget;
    const release = lane.tryAcquire(bytes) ?? (await waitForRoom(lane, bytes, req, reply, waitLimitMs));
    if (release === null) return; // the connection is gone: the reply was hijacked
    releases.set(req, release);
    if (connectionGone(req, reply)) {
      // Admitted after its connection closed ('close' has fired and will not again).
      release();
      return void reply.hijack();
    }
    reply.raw.once('close', release); // a connection that dies before an answer
  });
  app.addHook('onResponse', done);
  app.addHook('onRequestAbort', done);
}

/**
 * Waits for room for `bytes` in `lane` until admitted, the connection closes (null, after ending the
 * lifecycle: nobody is left to answer) or, for a large body, `waitLimitMs` pass (503).
 */
async function waitForRoom(
  lane: BodyBudget,
  bytes: number,
  req: FastifyRequest,
  reply: FastifyReply,
  waitLimitMs: number,
): Promise<(() => void) | null> {
  // 'close' of the response is the one signal of a connection that died before its answer (the
  // body is unread, so the request stream may never end); it may fire before this hook runs.
  const gone = new AbortController();
  const onClose = () => gone.abort();
  reply.raw.once('close', onClose);
  if (connectionGone(req, reply)) gone.abort();
  const late = waitLimitMs > 0 && bytes >= LIMITED_FROM_BYTES ? AbortSignal.timeout(waitLimitMs) : undefined;
  try {
    return await lane.acquire(bytes, late ? AbortSignal.any([gone.signal, late]) : gone.signal);
  } catch (err) {
    if (gone.signal.aborted) {
      reply.hijack();
      return null;
    }
    if (late?.aborted) throw unavailable('the server is busy reading other requests; try again shortly', 1);
    throw err;
  } finally {
    reply.raw.off('close', onClose);
  }
}

/** Whether the client's connection is closed (the answer can no longer be sent). */
function connectionGone(req: FastifyRequest, reply: FastifyReply): boolean {
  const socket = req.raw.socket as Socket | null;
  return reply.raw.destroyed || !socket || socket.destroyed;
}
