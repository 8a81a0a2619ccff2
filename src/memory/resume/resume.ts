/**
 * @module
 * The resume call: takes the lease (unless deferred), reads the working state, pointers, recent
 * turns, output refs and the memories matching the focus, open questions and goal, and renders them
 * as one briefing within the token budget (`briefing.ts`). Knows nothing of HTTP; used by the calls.
 */
import { invalidRequest } from '../../common/errors.ts';
import { words } from '../../common/words.ts';
import type { LeaseRecord, PointerRecord, WorkingStateRecord } from '../../store/resume-types.ts';
import type { Belief } from '../fold.ts';
import type { MemoryReader } from '../recall.ts';
import { type Briefing, renderBriefing } from './briefing.ts';
import type { Leases } from './leases.ts';
import type { ResumeRecords } from './records.ts';

/** Smallest token budget. */
export const MIN_BUDGET = 500;
/** Largest token budget. */
export const MAX_BUDGET = 200_000;
/** Budget when none is asked for. */
export const DEFAULT_BUDGET = 8000;
/** Turns read for the briefing at most (it shows the newest that fit). */
const TURN_WINDOW = 400;
/** Outputs listed at most. */
const OUTPUT_WINDOW = 100;
/** Pointers listed at most (the first by name; `GET /v1/pointers` pages through the rest). */
const POINTER_WINDOW = 1000;
/** Words of focus / open questions / goal searched, and beliefs per word. */
const SEARCH_WORDS = 12;
const PER_WORD = 20;
/** Words too common to search for. */
const SKIP = new Set(['the', 'and', 'for', 'with', 'that', 'this', 'from', 'what', 'which', 'into', 'are', 'how']);

/** A resume request. */
export interface ResumeRequest {
  namespace: string;
  holder: string;
  /** Estimated tokens. @default 8000 */
  tokenBudget?: number;
  /** Lease life, ms. @default 60000 */
  leaseTtlMs?: number;
  /** Read without taking the lease. @default false */
  defer?: boolean;
}

/** What resume answers (wire shapes are the caller's). */
export interface ResumeResult {
  namespace: string;
  /** True when the namespace has no working state and no turns yet. */
  fresh: boolean;
  /** The lease taken, or null when deferred. */
  taken: LeaseRecord | null;
  /** The live lease now (the one taken, or another's when deferred), or null. */
  lease: LeaseRecord | null;
  briefing: Briefing;
  state: WorkingStateRecord | null;
  pointers: PointerRecord[];
}

/** `tokenBudget` checked, or the default. @throws {TetherError} 400 naming `token_budget` */
export function tokenBudget(budget: number | undefined): number {
  if (budget === undefined) return DEFAULT_BUDGET;
  if (!Number.isInteger(budget) || budget < MIN_BUDGET || budget > MAX_BUDGET) {
    throw invalidRequest('token_budget', `must be an integer from ${MIN_BUDGET} to ${MAX_BUDGET}; got ${budget}`);
  }
  return budget;
}

/** Search words of the state's focus, open questions and goal, most specific (longest) first (bench:resume reads them too). */
export function focusWords(texts: (string | null)[]): string[] {
  const seen = new Set<string>();
  for (const text of texts) for (const w of words(text ?? '')) if (w.length >= 3 && !SKIP.has(w)) seen.add(w);
  return [...seen].sort((a, b) => b.length - a.length).slice(0, SEARCH_WORDS);
}

/** The resume call over the records, leases and memory. */
export class Resumer {
  readonly #records: ResumeRecords;
  readonly #leases: Leases;
  readonly #reader: MemoryReader;

  constructor(options: { records: ResumeRecords; leases: Leases; reader: MemoryReader }) {
    this.#records = options.records;
    this.#leases = options.leases;
    this.#reader = options.reader;
  }

  /**
   * Resumes: the lease (409 `lease_held` when another holds it, unless `defer`), then the briefing.
   * @throws {TetherError} 400 for a budget or TTL out of range; 409 `lease_held`
   */
  async resume(request: ResumeRequest): Promise<ResumeResult> {
    const budget = tokenBudget(request.tokenBudget);
    const ns = request.namespace;
    const taken = request.defer ? null : await this.#leases.acquire(ns, request.holder, request.leaseTtlMs);
    const [state, pointers, turns, totalTurns, outputs, totalOutputs] = await Promise.all([
      this.#records.workingState(ns),
      this.#records.pointers(ns, POINTER_WINDOW),
      this.#records.turns(ns, TURN_WINDOW),
      this.#records.countTurns(ns),
      this.#records.outputs(ns, OUTPUT_WINDOW),
      this.#records.countOutputs(ns),
    ]);
    const memories = state ? await this.#memories(ns, [state.focus, ...state.openQuestions, state.goal]) : [];
    const briefing = renderBriefing({
      namespace: ns,
      epoch: taken?.epoch ?? null,
      state,
      pointers,
      turns: turns.reverse(),
      totalTurns,
      memories,
      outputs,
      totalOutputs,
      budget,
    });
    return {
      namespace: ns,
      fresh: state === null && totalTurns === 0,
      taken,
      lease: taken ?? (await this.#leases.live(ns)),
      briefing,
      state,
      pointers,
    };
  }

  /** Beliefs matching the most words of `texts`, then the newest; each once. */
  async #memories(namespace: string, texts: (string | null)[]): Promise<Belief[]> {
    const score = new Map<string, { belief: Belief; hits: number; order: number }>();
    let order = 0;
    for (const word of focusWords(texts)) {
      for (const belief of await this.#reader.recall({ namespace, q: word, limit: PER_WORD })) {
        const seen = score.get(belief.event.id);
        if (seen) seen.hits += 1;
        else score.set(belief.event.id, { belief, hits: 1, order: order++ });
      }
    }
    return [...score.values()].sort((a, b) => b.hits - a.hits || a.order - b.order).map((s) => s.belief);
  }
}
