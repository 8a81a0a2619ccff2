/**
 * @module
 * Sizes chunks of heavy work by what the last ones cost, so each holds the event loop about
 * `budgetMs` whatever an item costs here (a new value's head reads, a fold of a fact's log, a commit
 * that rewrites index pages, a loaded machine). Pure: told the time each chunk took, never reads a
 * clock. Used by an import (`memory/backup-import.ts`: one writer turn per chunk), a purge's
 * transactions (`store/sqlite/purge.ts`) and the text index's background flushes
 * (`store/sqlite/fts-queue.ts`).
 */

/** Events in the first chunk, before any was timed. */
export const FIRST_CHUNK = 32;

/** Chunks whose cost the next size is taken from (their median). */
const COSTS_KEPT = 3;

/** Options of `ChunkSizer`. */
export interface ChunkSizerOptions {
  /** Most events in one chunk. */
  max: number;
  /** Time a chunk may hold the event loop (ms, > 0). */
  budgetMs: number;
  /** Events in the first chunk. @default min(FIRST_CHUNK, max) */
  first?: number;
  /**
   * Fewest events in a chunk, whatever they cost: a fixed cost per chunk (a commit) would otherwise
   * shrink every chunk to 1 on a loaded machine. @default 1
   */
  min?: number;
}

/** The size of the next chunk, from the cost of the ones before. */
export class ChunkSizer {
  readonly #max: number;
  readonly #budgetMs: number;
  readonly #min: number;
  /** Cost of an event (ms) in the last `COSTS_KEPT` chunks. */
  readonly #costs: number[] = [];
  #size: number;

  constructor(options: ChunkSizerOptions) {
    const { max, budgetMs } = options;
    if (!Number.isInteger(max) || max < 1) throw new Error(`Cannot size chunks as 'max' must be ≥ 1: got ${max}`);
    if (!(budgetMs > 0)) throw new Error(`Cannot size chunks as 'budgetMs' must be > 0: got ${budgetMs}`);
    const min = options.min ?? 1;
    if (!Number.isInteger(min) || min < 1 || min > max) {
      throw new Error(`Cannot size chunks as 'min' must be a whole number from 1 to 'max' (${max}): got ${min}`);
    }
    this.#max = max;
    this.#budgetMs = budgetMs;
    this.#min = min;
    this.#size = Math.max(min, Math.min(max, options.first ?? FIRST_CHUNK));
  }

  /** Events to put in the next chunk. */
  get size(): number {
    return this.#size;
  }

  /**
   * Notes that a chunk of `events` held the writer `ms`. The next one gets what fits the budget at the
   * median cost of an event over the last chunks (one chunk the machine slowed, preempted on a loaded
   * host, does not shrink the next to nothing), at most twice the last one (a chunk of skipped events
   * says little of new ones), at least `min`.
   */
  took(events: number, ms: number): void {
    if (events < 1 || !(ms >= 0)) return;
    this.#costs.push(ms / events);
    if (this.#costs.length > COSTS_KEPT) this.#costs.shift();
    const sorted = [...this.#costs].sort((a, b) => a - b);
    const cost = sorted[(sorted.length - 1) >> 1] as number;
    const fits = cost === 0 ? Number.POSITIVE_INFINITY : Math.floor(this.#budgetMs / cost);
    this.#size = Math.max(this.#min, Math.min(this.#max, 2 * events, fits));
  }
}
