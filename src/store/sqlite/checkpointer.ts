/**
 * @module
 * WAL checkpoints on a worker thread. With SQLite's automatic checkpoints the connection that commits
 * copies the WAL back into the database and fsyncs both files, inline, on the event loop: at 10^6
 * events that was about a third of the time the memory server spent writing (bench/lib/remember-profile.ts
 * with `wal_autocheckpoint` 8000 vs off). Here a second connection, on its own thread, runs PASSIVE
 * checkpoints (they never block the writer) every `intervalMs` while there are writes.
 *
 * The WAL starts over (instead of growing) only when a write transaction begins with every frame
 * already checkpointed, which a background checkpoint never achieves under steady writes: the writer
 * appends while it copies. So once the WAL holds more than `maxWalPages` pages, passes run back to back
 * until one finds little left to copy (`tailPages`), then `onLongWal` asks the store to run one PASSIVE
 * checkpoint itself, between two of its transactions: it copies just the frames appended during that
 * last pass, and the next write starts the WAL over.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { WAL_SHRINK_SOURCE } from './wal-shrink.ts';

// Plain CommonJS evaluated by the worker: no TypeScript loader needed on that thread.
// SQLite syncs the database file only after a checkpoint that reached the end of the WAL, which a pass
// under steady writes never does: the pages every pass copied stayed dirty until the writer's catch-up
// checkpoint, whose fsync then wrote back up to 256 MiB on the writing thread (~150-250 ms here, the
// remember p99). So each pass that copied pages syncs the file itself (an fsync writes back the
// file's dirty pages whichever descriptor asks), and the catch-up finds little left to write.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { openSync, fdatasyncSync, closeSync } = fs;
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const file = openSync(workerData.path, 'r');
let backfilled = 0;
const pause = new Int32Array(new SharedArrayBuffer(4));
${WAL_SHRINK_SOURCE}
parentPort.on('message', (msg) => {
  if (typeof msg === 'object' && msg !== null && typeof msg.shrink === 'number') {
    try {
      parentPort.postMessage({ shrunk: shrinkWal(db, { walPath: workerData.path + '-wal', chunk: msg.shrink, fs }) });
    } catch (err) {
      parentPort.postMessage({ error: String((err && err.message) || err) });
    }
    return;
  }
  if (msg === 'close') {
    db.close();
    closeSync(file);
    parentPort.postMessage({ closed: true });
    return;
  }
  if (msg === 'truncate') {
    // The end of a purge (see purge.ts): the WAL copied back and cut to 0 bytes, so no older frame
    // keeps an erased page. It waits for readers to leave the WAL, polling every 0.25 ms for 10 s at
    // most: SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20… ms between tries, so a reader of a
    // moment (another tenant's recall) could cost tens of ms, while the store holds its writes.
    try {
      let r;
      for (let tries = 0; tries < 40000; tries++) {
        [r] = db.pragma('wal_checkpoint(TRUNCATE)');
        if (r.busy === 0) break;
        Atomics.wait(pause, 0, 0, 0.25);
      }
      backfilled = 0;
      parentPort.postMessage({ truncated: true, busy: r.busy });
    } catch (err) {
      parentPort.postMessage({ error: String((err && err.message) || err) });
    }
    return;
  }
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    const synced = r.checkpointed !== backfilled;
    if (synced) fdatasyncSync(file);
    backfilled = r.checkpointed;
    parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed, synced });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});
`;

/** Options of `Checkpointer`. */
export interface CheckpointerOptions {
  /** The database file (not `:memory:`). */
  path: string;
  /** Time between checkpoints while there are writes (ms). @default 200 */
  intervalMs?: number;
  /**
   * WAL pages beyond which `onLongWal` is called. Each call costs the writer a short checkpoint and two
   * fsyncs (7-15 ms on the benchmark machine at 10^6 events), so the WAL may grow this long first. @default 65536 (256 MiB of 4 KiB pages)
   */
  maxWalPages?: number;
  /** A pass that copied at most this many pages means the writer can finish the job cheaply. @default 1024 */
  tailPages?: number;
  /**
   * Called when the WAL is long and the background passes have caught up to within `tailPages`, or
   * in any case once it holds more than 4x `maxWalPages` pages.
   */
  onLongWal: () => void;
  /**
   * Called once if the worker thread ends without `close()` (it could not open the file, or crashed):
   * no background checkpoint runs any more, so the owner must checkpoint itself or the WAL grows without bound.
   */
  onStopped?: (reason: string) => void;
}

/** What one checkpoint reported. */
interface Report {
  log?: number;
  checkpointed?: number;
  /** The pass copied pages and synced the database file after it. */
  synced?: boolean;
  error?: string;
  closed?: boolean;
  /** A TRUNCATE checkpoint ran; `busy` is its answer (0 = the WAL was truncated). */
  truncated?: boolean;
  busy?: number;
  /** A shrink step ran (`shrink`). */
  shrunk?: ShrinkStep;
}

/** What one step of `Checkpointer.shrink` did. */
export interface ShrinkStep {
  /** Bytes cut off the WAL file (0 when a commit came first, or when the step made the WAL start over). */
  cut: number;
  /** No dead tail is left to cut (or none can be made now: a reader holds the WAL). */
  done: boolean;
}

/** Background checkpoints of one database file. */
export class Checkpointer {
  readonly #worker: Worker;
  readonly #maxWalPages: number;
  readonly #tailPages: number;
  readonly #onLongWal: () => void;
  /** Pages checkpointed as of the previous report, to know how much the last pass copied. */
  #backfilled = 0;
  readonly #timer: NodeJS.Timeout;
  #dirty = false;
  #paused = 0;
  #inFlight: Promise<Report> | null = null;
  #reply: ((r: Report) => void) | null = null;
  /** The worker thread has ended: nothing sent to it would ever be answered. */
  #exited = false;
  #closing = false;
  /** The last failure, kept for diagnostics (a failed checkpoint is retried at the next tick). */
  lastError: string | null = null;
  /** Checkpoint passes answered, and those that copied pages and synced the database file. */
  readonly stats = { passes: 0, syncs: 0 };

  constructor(options: CheckpointerOptions) {
    this.#maxWalPages = options.maxWalPages ?? 65_536;
    this.#tailPages = options.tailPages ?? 1024;
    this.#onLongWal = options.onLongWal;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: options.path, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
    });
    this.#worker.unref();
    this.#worker.on('message', (r: Report) => {
      const reply = this.#reply;
      this.#reply = null;
      reply?.(r);
    });
    this.#worker.on('error', (err) => {
      this.lastError = err.message;
    });
    this.#worker.on('exit', () => {
      this.#exited = true;
      clearInterval(this.#timer);
      const reply = this.#reply;
      this.#reply = null;
      reply?.({ error: 'checkpoint worker exited' });
      if (this.#closing) return;
      this.lastError ??= 'checkpoint worker exited';
      try {
        options.onStopped?.(this.lastError);
      } catch (err) {
        this.lastError = (err as Error).message;
      }
    });
    this.#timer = setInterval(() => void this.#tick(), options.intervalMs ?? 200);
    this.#timer.unref();
  }

  /** Notes a commit: a checkpoint follows within `intervalMs`. */
  noteWrite(): void {
    this.#dirty = true;
  }

  /**
   * Posts `msg` once the message before it was answered (the worker answers one at a time, and the
   * answer goes to the one `#reply`): a purge's steps, a tick and `close()` may all ask at once.
   */
  #send(msg: string | { shrink: number }): Promise<Report> {
    const before = this.#inFlight;
    const sent = (async (): Promise<Report> => {
      if (before) await before;
      if (this.#exited) return { error: 'checkpoint worker exited' };
      return new Promise<Report>((resolve) => {
        this.#reply = resolve;
        this.#worker.postMessage(msg);
      });
    })();
    this.#inFlight = sent;
    void sent.finally(() => {
      if (this.#inFlight === sent) this.#inFlight = null;
    });
    return sent;
  }

  /** @throws {Error} once `close()` was called: the purge's steps stop there. */
  #open(): void {
    if (this.#closing) throw new Error('the checkpointer is closing');
  }

  async #tick(): Promise<void> {
    if (!this.#dirty || this.#inFlight !== null || this.#paused > 0) return;
    this.#dirty = false;
    const r = await this.#send('checkpoint');
    if (r.log !== undefined) this.stats.passes++;
    if (r.synced) this.stats.syncs++;
    if (r.error !== undefined || r.log === undefined || r.checkpointed === undefined) {
      this.lastError = r.error ?? 'no checkpoint report';
      this.#dirty = true;
      return;
    }
    // After the WAL started over, everything checkpointed was copied by this pass.
    const copied = r.checkpointed >= this.#backfilled ? r.checkpointed - this.#backfilled : r.checkpointed;
    this.#backfilled = r.checkpointed;
    if (r.log <= this.#maxWalPages || this.#paused > 0) {
      if (r.checkpointed < r.log) this.#dirty = true; // not caught up: go on at the next tick
      return;
    }
    // A writer that outpaces every pass never leaves a short tail: past 4x the limit, catch up anyway.
    if (copied <= this.#tailPages || r.log > 4 * this.#maxWalPages) {
      try {
        this.#onLongWal();
      } catch (err) {
        // Runs from a timer: nobody to throw to (an unhandled rejection would end the process).
        this.lastError = (err as Error).message;
        this.#dirty = true; // tried again at the next tick
        return;
      }
      this.#backfilled = 0;
    }
    // Long WAL: the next pass now rather than at the next tick, so the tail keeps shrinking.
    this.#dirty = true;
    setImmediate(() => void this.#tick());
  }

  /**
   * Waits for a running checkpoint and holds further ones until the returned function is called:
   * for work that needs the checkpoint lock itself (purge's TRUNCATE checkpoint).
   */
  async pause(): Promise<() => void> {
    this.#paused++;
    await this.#inFlight;
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      this.#paused--;
    };
  }

  /** Whether the worker thread still runs (else `catchUp` and `truncate` are not available). */
  get running(): boolean {
    return !this.#exited && !this.#closing;
  }

  /**
   * One PASSIVE checkpoint now (it never blocks the writer), even while paused: the purge copies the
   * bulk of the WAL back before it holds writes for `truncate`.
   */
  async catchUp(): Promise<void> {
    this.#open();
    const r = await this.#send('checkpoint');
    if (r.error !== undefined) throw new Error(r.error);
    if (r.checkpointed !== undefined) this.#backfilled = r.checkpointed;
  }

  /**
   * On the worker's connection: a TRUNCATE checkpoint (the end of a purge). Call while paused
   * (`pause()`), with no write of the owner's connection until it resolves.
   * @throws {Error} when the worker failed or could not truncate the WAL
   */
  async truncate(): Promise<void> {
    this.#open();
    const r = await this.#send('truncate');
    this.#backfilled = 0;
    if (r.error !== undefined || !r.truncated) throw new Error(r.error ?? 'the checkpoint worker did not truncate');
    if (r.busy !== 0) throw new Error('Cannot finish the purge as the WAL could not be truncated: retry it');
  }

  /**
   * One step of cutting the WAL file's dead tail by at most `chunkBytes` (the frames of before the WAL
   * started over; when there are none but every frame is copied back, the step makes the WAL start
   * over). It holds SQLite's write lock while it runs, so the owner must hold its own writes meanwhile
   * (its connection would wait in the busy handler, on the event loop). The end of a purge: a TRUNCATE
   * of a 160 MB file spends ~30 ms in ftruncate alone, all of it with writes held; cut in 4 MiB steps
   * first, each holds them about a millisecond. Call while paused (`pause()`).
   * @throws {Error} when the worker failed, or once `close()` was called
   */
  async shrink(chunkBytes: number): Promise<ShrinkStep> {
    this.#open();
    const r = await this.#send({ shrink: chunkBytes });
    if (r.error !== undefined || r.shrunk === undefined)
      throw new Error(r.error ?? 'the checkpoint worker did not shrink');
    return r.shrunk;
  }

  /** Stops the timer and the worker (its connection closed). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#closing = true;
    this.#paused++;
    await this.#send('close');
    await this.#worker.terminate();
  }
}

/**
 * The checkpointer of a store whose connection `db` (opened on `path`, `wal_autocheckpoint = 0`) commits
 * between ticks. If the worker stops, `db` goes back to SQLite's inline automatic checkpoints.
 */
export function startCheckpointer(db: Database.Database, path: string): Checkpointer {
  return new Checkpointer({
    path,
    onLongWal: () => {
      // Synced like any checkpoint (the WAL before copying, the database after): 7-15 ms here, once
      // per 256 MiB of WAL, instead of every commit's share of 8000-page inline checkpoints.
      if (db.open && !db.inTransaction) db.pragma('wal_checkpoint(PASSIVE)');
    },
    onStopped: () => {
      if (db.open) db.pragma('wal_autocheckpoint = 8000');
    },
  });
}
