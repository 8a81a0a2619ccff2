/**
 * @module
 * An import's body parsed and checked off the event loop, on a worker thread (`import-worker.ts`). A
 * 1 MiB body is thousands of lines; parsed on the event loop, even in time slices, its objects (kept
 * until their chunk is stored) made every scavenge copy them, and those pauses, with the parse itself, were most of another tenant's
 * wait during an import (bench:fairness). Here the event loop holds only the registry versions and,
 * one at a time, the chunk of events or resume records it stores. The route sends bodies of
 * `OFF_LOOP_IMPORT_BYTES` or more here; smaller ones are parsed on the event loop in slices, as a
 * worker's start costs more than they do. Errors are those of the parse on the event loop: a
 * `TetherError` crosses as its code, message and field.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AuthContext } from '../auth/auth-context.ts';
import { type ErrorCode, TetherError } from '../common/errors.ts';
import { workerLoadable } from '../common/worker-bundle.ts';
import type { ImportedVersion, ImportSource, TenantPlan } from '../memory/backup-import.ts';
import type { RecordCheckOptions } from '../memory/resume/record-check.ts';
import type { StoredEvent } from '../store/fact-store.ts';
import type { ResumeRecordLine } from '../store/resume-types.ts';

/** Bodies of this many characters or more are parsed on a worker thread (64 Ki: ~20 ms of parsing). */
export const OFF_LOOP_IMPORT_BYTES = 64 * 1024;

/** A request to the import worker. */
export type ImportWorkerRequest = { id: number } & (
  | { op: 'parse'; body: string; auth: AuthContext; records: RecordCheckOptions }
  | { op: 'check'; plans: TenantPlan[]; now: number }
  | { op: 'events' | 'records'; from: number; count: number }
  | { op: 'drop' }
);

/** The import worker's answer to request `id`. */
export interface ImportWorkerReply {
  id: number;
  result?: unknown;
  error?: { code: ErrorCode; message: string; field?: string };
}

/**
 * The error the worker reported: a client's mistake as the `TetherError` it was; anything else as a
 * plain error, which the server answers as an internal error without its text (logged, not sent).
 */
function errorOf(error: NonNullable<ImportWorkerReply['error']>): Error {
  if (error.code === 'internal') return new Error(`import worker: ${error.message}`);
  return new TetherError(error.code, error.message, { field: error.field });
}

/** Import workers started, and imports parsed on one, since the process started (tests check which bodies go there). */
export const importWorkerStats = { started: 0, imports: 0 };

/** The worker's entry beside this file, with this file's extension: `.js` once compiled; `.ts` under tsx. */
function entryHref(): string {
  return new URL(`./import-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url).href;
}

/** The entry's URL once made (from sources, a data: URL of the whole bundle: its parse alone held the loop ~7 ms). */
let entry: URL | null = null;

/**
 * The entry as a worker loads it: from sources, bundled into plain JavaScript once per process
 * (`common/worker-bundle.ts`, ~0.15 s of the event loop the first time), its URL made once too: a
 * worker stopped when idle starts again at the next import, while other tenants' requests run.
 */
function workerEntry(): URL {
  entry ??= new URL(workerLoadable(entryHref()));
  return entry;
}

/**
 * Makes the worker's code ready (from TypeScript sources: its bundle), so the first import does not
 * make it while other tenants' requests run. A server calls it at start, as the read pool bundles its own.
 */
export function prepareImportWorker(): void {
  workerEntry();
}

/** What the parse found: the versions whole, the events and records counted (taken in chunks later). */
interface Parsed {
  versions: ImportedVersion[];
  tenants: string[];
  events: number;
  records: number;
}

/** One import's body, parsed and wire-checked on the worker: checked against the plans, then taken chunk by chunk. */
export interface ParsedImport {
  /** The body's registry versions, in line order. */
  versions: ImportedVersion[];
  /** The tenants of its versions and events, in the order first named. */
  tenants: string[];
  /**
   * Checks every event against `plans` (`checkImportedEvents`).
   * @throws {TetherError} 400 naming the line and field of the first refused event
   */
  check(plans: TenantPlan[], now: number): Promise<void>;
  /** The body's events, in line order, taken from the worker a chunk at a time. */
  events: ImportSource<StoredEvent>;
  /** The body's resume records, in line order, taken from the worker a chunk at a time. */
  records: ImportSource<ResumeRecordLine>;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/**
 * How long the import worker is kept after an import, ms: the next request of a `tether import` (1 MiB
 * each, back to back) reuses it; a server that stopped importing gives back its ~30 MB (an isolate
 * with the schemas loaded).
 */
export const IMPORT_WORKER_IDLE_MS = 30_000;

/** Options of `ImportWorker`. */
export interface ImportWorkerOptions {
  /** How long the worker is kept after an import, ms. @default IMPORT_WORKER_IDLE_MS */
  idleMs?: number;
  /** Called when an idle worker was stopped (tests wait for it). */
  onIdleStop?: () => void;
}

/**
 * The import worker of one server: started by the first import that needs it (a worker's start is
 * ~0.1 s of a core, and an isolate's memory a server that never imports should not hold), kept while
 * imports come (not holding the process open), stopped after `idleMs` without one. It parses one
 * import at a time; the next waits (imports already come one at a time, in the body budget's lane of
 * their own). A worker that died is replaced by the next import.
 */
export class ImportWorker {
  readonly #idleMs: number;
  readonly #onIdleStop: (() => void) | undefined;
  #idle: NodeJS.Timeout | null = null;
  /** Imports in `run`, waiting or parsing. */
  #runs = 0;
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #turn: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: ImportWorkerOptions = {}) {
    this.#idleMs = options.idleMs ?? IMPORT_WORKER_IDLE_MS;
    this.#onIdleStop = options.onIdleStop;
  }

  /**
   * Parses and wire-checks `body` on the worker (`import-lines.ts`), as `parseImportLines` would, then
   * runs `use` on it; the worker drops the body's items when `use` ends.
   * @throws {TetherError} 400/403 naming the first bad line and field, or what `use` throws
   */
  async run<T>(
    body: string,
    auth: AuthContext,
    records: RecordCheckOptions,
    use: (parsed: ParsedImport) => Promise<T>,
  ): Promise<T> {
    this.#runs++;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    const before = this.#turn;
    let done = () => {};
    this.#turn = new Promise<void>((resolve) => {
      done = resolve;
    });
    await before;
    try {
      const found = await this.#call<Parsed>({ op: 'parse', body, auth, records });
      importWorkerStats.imports++;
      return await use({
        versions: found.versions,
        tenants: found.tenants,
        check: (plans, now) => this.#call<void>({ op: 'check', plans, now }),
        events: {
          count: found.events,
          take: (from, count) => this.#call<StoredEvent[]>({ op: 'events', from, count }),
        },
        records: {
          count: found.records,
          take: (from, count) => this.#call<ResumeRecordLine[]>({ op: 'records', from, count }),
        },
      });
    } finally {
      if (this.#worker) await this.#call({ op: 'drop' }).catch(() => {});
      if (--this.#runs === 0 && !this.#closed) this.#idle = setTimeout(() => this.#stopIdle(), this.#idleMs).unref();
      done();
    }
  }

  #stopIdle(): void {
    this.#idle = null;
    const worker = this.#worker;
    if (this.#runs > 0 || !worker) return;
    this.#worker = null;
    void worker.terminate().then(() => this.#onIdleStop?.());
  }

  /** Stops the worker (calls in flight are refused); repeat calls are safe. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#idle) clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }

  #call<T>(request: Record<string, unknown> & { op: ImportWorkerRequest['op'] }): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the import worker is closed'));
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  #start(): Worker {
    // No preloads (a server run through tsx has `--import tsx`): the entry is plain JavaScript.
    const worker = new Worker(workerEntry(), { execArgv: [] });
    importWorkerStats.started++;
    worker.unref(); // ref'd only while it has calls in flight
    worker.on('message', (msg: ImportWorkerReply) => {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      if (this.#pending.size === 0) worker.unref();
      if (msg.error) p.reject(errorOf(msg.error));
      else p.resolve(msg.result);
    });
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = null;
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the import worker exited')));
    this.#worker = worker;
    return worker;
  }
}
