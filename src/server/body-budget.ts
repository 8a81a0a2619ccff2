/**
 * @module
 * A budget of request body bytes in work at once (issue 9, item 9). What grows under write load is
 * the requests in flight: each batch of statements is held, parsed, validated and answered (about
 * 40x its JSON size in heap) until its group commit, so 32 clients sending 500-statement batches took
 * the peak RSS from 250 to 380 MB (266 MB with this budget at 512 KiB). A request with a body waits (FIFO, before its body is read: the
 * socket is paused, so the bytes stay in the kernel) until the bytes in work leave room for it; one
 * larger than the budget runs alone. Past `maxWaiting` waiters: 503 + `Retry-After`. Installed by `app.ts`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unavailable } from '../common/errors.ts';

/** Options of `BodyBudget`. */
export interface BodyBudgetOptions {
  /** Body bytes in work at once. @default 512 KiB */
  maxBytes?: number;
  /** Requests waiting for room; past it 503. @default 1000 */
  maxWaiting?: number;
}

/** Admits requests by the size of their bodies. */
export class BodyBudget {
  readonly #max: number;
  readonly #maxWaiting: number;
  #inWork = 0;
  #running = 0;
  readonly #waiting: { bytes: number; admit: () => void }[] = [];

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
   * when the request is done.
   * @throws {TetherError} 503 `unavailable` when `maxWaiting` requests already wait
   */
  async acquire(bytes: number): Promise<() => void> {
    if (this.#waiting.length > 0 || !this.#fits(bytes)) {
      if (this.#waiting.length >= this.#maxWaiting) throw unavailable('too many large requests at once; retry', 1);
      await new Promise<void>((admit) => this.#waiting.push({ bytes, admit }));
    } else {
      this.#take(bytes);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inWork -= bytes;
      this.#running--;
      this.#admitWaiting();
    };
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
      next.admit();
    }
  }
}

/**
 * Makes every request with a body (by Content-Length; a chunked one counts as `chunkedBytes`) wait
 * for room in `budget` after its key was checked, until its answer is sent or it is aborted.
 */
export function installBodyBudget(app: FastifyInstance, budget: BodyBudget, chunkedBytes: number): void {
  const releases = new WeakMap<FastifyRequest, () => void>();
  const done = async (req: FastifyRequest) => {
    releases.get(req)?.();
  };
  app.addHook('onRequest', async function bodyBudget(req, reply) {
    const length = Number(req.headers['content-length'] ?? 0);
    const bytes = req.headers['transfer-encoding'] !== undefined ? chunkedBytes : Number.isFinite(length) ? length : 0;
    if (bytes <= 0) return;
    const release = await budget.acquire(bytes);
    releases.set(req, release);
    reply.raw.once('close', release); // a connection that died before an answer
  });
  app.addHook('onResponse', done);
  app.addHook('onRequestAbort', done);
}
