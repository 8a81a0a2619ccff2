/**
 * @module
 * Cooperative time slices for long loops on the event loop (an import's parse and checks): the loop
 * asks `due()` per item and awaits `yield()` when its slice is spent, so other requests are served
 * every few ms instead of after the whole loop, and the small ones among them go first
 * (`light-first.ts`). Knows nothing of what the loop does.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterLightRequests, leaveLightLane, type Ticket } from './light-first.ts';

/** Longest run between two turns of the event loop, in ms. @default 2 */
export const SLICE_MS = 2;

/**
 * What a loop of heavy work does between two of its steps: the request it works for (`owner`; none for
 * background work) becomes heavy (`light-first.ts`), every pending I/O callback and timer runs (a
 * `setImmediate` turn), then it waits while light requests are in flight (at most `MAX_DEFER_MS`).
 */
export async function letOthersRun(owner: Ticket | null = null): Promise<void> {
  leaveLightLane(owner);
  await nextTurn();
  await afterLightRequests();
}

/** A loop's running time since it last let the event loop turn. */
export class TimeSlice {
  readonly #budgetMs: number;
  readonly #owner: Ticket | null;
  #since = performance.now();
  /** Times the loop gave the event loop a turn. */
  yields = 0;

  /**
   * @param owner the ticket of the request the loop works for, heavy from its first yield (none: background work)
   * @param budgetMs longest run between two turns (ms, > 0) @default 2
   */
  constructor(owner: Ticket | null = null, budgetMs = SLICE_MS) {
    if (!(budgetMs > 0)) throw new Error(`Cannot slice time as 'budgetMs' must be > 0: got ${budgetMs}`);
    this.#budgetMs = budgetMs;
    this.#owner = owner;
  }

  /** True once this slice has run `budgetMs`: the loop should `await yield()` now. */
  due(): boolean {
    return performance.now() - this.#since >= this.#budgetMs;
  }

  /** Lets others run (`letOthersRun`: light requests first), then starts a new slice. */
  async yield(): Promise<void> {
    await letOthersRun(this.#owner);
    this.yields++;
    this.#since = performance.now();
  }
}
