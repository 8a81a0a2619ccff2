/**
 * @module
 * A small pool of worker threads for the SQLite store's heavy reads (search, as_of log pages,
 * history, export): each worker has its own read-only connection on the WAL database, so a read
 * of thousands of rows runs beside the event loop instead of on it. Readers never block the writer
 * and see every transaction committed before they start, so a read after a write sees it.
 * Whole `as_of` folds (`foldFactLogs`) take one lane of at most `size - 1` workers (at least 1): ten
 * at once queue here, one after another, and leave a worker free for the other reads. Heavy answers
 * come back as finished JSON bytes (`renderedReads`), and the workers run at a lower OS priority
 * (`thread-priority.ts`): on a machine of few cores the event loop keeps its CPU. Answers the loop
 * writes whole come in a slot of a slab the workers share (`answer-slab.ts`), lent to the caller until
 * it says they were written (`lent-answers.ts`).
 * Used by `sqlite-store.ts`; a store in memory (no file to share) reads inline instead.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { workerLoadable } from '../../common/worker-bundle.ts';
import type { RenderedReads } from '../answer-text-port.ts';
import { lendAnswer } from '../lent-answers.ts';
import type { OffLoopFolds } from '../log-fold-port.ts';
import { AnswerSlab, type SlabMemory, type SlabRef } from './answer-slab.ts';
import type { ReadOp } from './read-queries.ts';

/** Options of `ReadPool`. */
export interface ReadPoolOptions {
  /** The database file (not `:memory:`). */
  path: string;
  /** Worker threads. @default 2 */
  size?: number;
  /** URL of the fold module (`store/log-fold-port.ts`) the workers load for whole `as_of` folds; none: no folds. */
  foldModule?: string;
  /** URL of the answer module (`server/answer-text.ts`) the workers load to build answer text; none: no text. */
  answerModule?: string;
}

/** What the workers start with. */
interface WorkerStart {
  path: string;
  foldModule: string | null;
  answerModule: string | null;
  slab: SlabMemory | null;
}

/** A worker thread's OS id and nice value, as it reported them at start (null: not set there). */
export interface WorkerThreadInfo {
  tid: number | null;
  nice: number | null;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** A worker's message about a read: its result or error; `lent`: the result's bytes are in that slab slot. */
interface WorkerAnswer {
  id?: number;
  result?: unknown;
  error?: string;
  lent?: SlabRef;
}

interface Member {
  worker: Worker;
  pending: Map<number, Pending>;
  alive: boolean;
  thread: WorkerThreadInfo | null;
}

/**
 * The worker's entry beside this file, with this file's extension: `.js` once compiled; `.ts` under tsx
 * (tests, dev), bundled into plain JavaScript first (worker-bundle.ts: no tsx loader on the worker's thread).
 */
function workerEntry(): URL {
  const ext = extname(fileURLToPath(import.meta.url));
  return new URL(workerLoadable(new URL(`./read-worker${ext}`, import.meta.url).href, 'better-sqlite3'));
}

/** Read workers of one database file. */
export class ReadPool {
  readonly #members: Member[] = [];
  #nextId = 1;
  #closed = false;
  /**
   * Reads answered by the workers, of them whole `as_of` folds, the most folds ever in flight at once,
   * and answers lent in a slab slot (tests check the pool is used, the lane holds, the slab is used).
   */
  readonly stats = { reads: 0, folds: 0, foldPeak: 0, lent: 0 };
  /** Folds sent and not answered yet, and those waiting for a lane. */
  #folding = 0;
  readonly #foldQueue: (() => void)[] = [];
  readonly #foldLanes: number;
  readonly #answers: boolean;
  /** The answers' slab (null without an answer module). */
  readonly #slab: AnswerSlab | null;
  /**
   * Workers at most; one starts with the pool, the others when a read finds every running one busy
   * (each is an isolate and a page cache: ~10 MB of RSS that a server reading one thing at a time never needs).
   */
  readonly #size: number;
  readonly #spawn: () => Member;

  constructor(options: ReadPoolOptions) {
    const size = options.size ?? 2;
    if (!Number.isInteger(size) || size < 1) {
      throw new Error(`Cannot start the read pool as 'size' must be a whole number ≥ 1: got ${size}`);
    }
    this.#foldLanes = Math.max(1, size - 1);
    this.#answers = options.answerModule !== undefined;
    this.#size = size;
    const entry = workerEntry();
    const slab = this.#answers ? AnswerSlab.memory() : null;
    this.#slab = slab && new AnswerSlab(slab);
    const data: WorkerStart = {
      path: options.path,
      foldModule: options.foldModule ? workerLoadable(options.foldModule) : null,
      answerModule: options.answerModule ? workerLoadable(options.answerModule) : null,
      slab,
    };
    this.#spawn = () => this.#start(entry, data);
    this.#members.push(this.#spawn());
  }

  #start(entry: URL, workerData: WorkerStart): Member {
    const worker = new Worker(entry, { workerData });
    const member: Member = { worker, pending: new Map(), alive: true, thread: null };
    worker.unref(); // ref'd only while it has reads in flight
    worker.on('message', (msg: WorkerAnswer & Partial<WorkerThreadInfo>) => {
      if (msg.id === undefined) {
        if (msg.tid !== undefined) member.thread = { tid: msg.tid, nice: msg.nice ?? null };
        return;
      }
      const p = member.pending.get(msg.id);
      if (!p) {
        if (msg.lent) this.#slab?.free(msg.lent.slot);
        return;
      }
      member.pending.delete(msg.id);
      if (member.pending.size === 0) worker.unref();
      if (msg.error !== undefined) p.reject(new Error(msg.error));
      else {
        this.stats.reads++;
        p.resolve(msg.lent ? this.#lent(msg.result, msg.lent) : msg.result);
      }
    });
    const fail = (err: Error) => {
      member.alive = false;
      for (const p of member.pending.values()) p.reject(err);
      member.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('read worker exited')));
    return member;
  }

  /** A lent answer's bytes (a view on its slot) put where the worker left their place empty. */
  #lent(result: unknown, ref: SlabRef): unknown {
    const slab = this.#slab as AnswerSlab;
    this.stats.lent++;
    const bytes = lendAnswer(slab.view(ref), () => slab.free(ref.slot));
    return result === null ? bytes : { ...(result as object), body: bytes };
  }

  /** Slab slots held now: lent and not given back yet, or being filled by a worker. */
  get slotsHeld(): number {
    return this.#slab?.held() ?? 0;
  }

  /**
   * `as_of` searches and folds run whole on a worker (only the answer comes back). `flush` runs first
   * on the writer's connection, so a search sees the words of what was just written.
   */
  offLoopFolds(flush: () => void): OffLoopFolds {
    return {
      searchFacts: (namespace, terms, hits) => {
        if (terms.length === 0) return Promise.resolve([]);
        flush();
        return this.run('searchFacts', namespace, terms, hits);
      },
      foldFactLogs: (query) => this.run('foldFactLogs', query),
    };
  }

  /**
   * History pages, `as_of` folds, searches and long recalls answered as finished JSON bytes, built on
   * a worker by the answer module (null when the pool was given none). `flush` as for `offLoopFolds`.
   */
  renderedReads(flush: () => void): RenderedReads | null {
    if (!this.#answers) return null;
    return {
      historyPage: (query) => this.run('historyPageText', query),
      foldFactLogs: (query) => this.run('foldFactLogsText', query),
      searchBeliefs: (query) => {
        flush();
        return this.run('searchBeliefsText', query);
      },
      currentBeliefs: (query) => this.run('currentBeliefsText', query),
      exportPage: (query) => this.run('exportPageText', query),
    };
  }

  /** Each started worker's thread id and nice value, once it reported them (tests read the OS's view). */
  get threads(): WorkerThreadInfo[] {
    return this.#members.flatMap((m) => (m.thread ? [m.thread] : []));
  }

  /** True while at least one worker runs (else the store reads inline). */
  get running(): boolean {
    return !this.#closed && this.#members.some((m) => m.alive);
  }

  /**
   * Runs a read on the least busy worker.
   * @throws {Error} when no worker runs, or the read failed on it
   */
  run<T>(op: ReadOp, ...args: unknown[]): Promise<T> {
    if (op === 'foldFactLogs' || op === 'foldFactLogsText') return this.#fold<T>(op, args);
    return this.#send<T>(op, args);
  }

  /** A fold in its lane: sent once fewer than `#foldLanes` folds are in flight (FIFO). */
  async #fold<T>(op: ReadOp, args: unknown[]): Promise<T> {
    // A finished fold hands its lane to the next waiting one directly (it never counts down then).
    if (this.#folding >= this.#foldLanes) await new Promise<void>((go) => this.#foldQueue.push(go));
    else this.#folding++;
    this.stats.foldPeak = Math.max(this.stats.foldPeak, this.#folding);
    try {
      const answer = await this.#send<T>(op, args);
      this.stats.folds++;
      return answer;
    } finally {
      const next = this.#foldQueue.shift();
      if (next) next();
      else this.#folding--;
    }
  }

  #send<T>(op: ReadOp, args: unknown[]): Promise<T> {
    let best: Member | undefined;
    for (const m of this.#members) if (m.alive && (!best || m.pending.size < best.pending.size)) best = m;
    if (!best || this.#closed) return Promise.reject(new Error('no read worker runs'));
    if (best.pending.size > 0 && this.#members.length < this.#size) {
      best = this.#spawn();
      this.#members.push(best);
    }
    const member = best;
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      member.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (member.pending.size === 1) member.worker.ref();
      member.worker.postMessage({ id, op, args });
    });
  }

  /** Stops every worker (reads in flight are refused); repeat calls are safe. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const go of this.#foldQueue.splice(0)) go(); // refused by #send: no worker runs
    await Promise.all(this.#members.map((m) => m.worker.terminate()));
  }
}
