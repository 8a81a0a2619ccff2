/**
 * @module
 * Deterministic synthetic memory events for benchmarks: people as subjects (hot ones get more facts),
 * every predicate of the `personal` starter registry plus `note`, string values drawn from word lists
 * with a Zipf law (so search terms range from common to rare), several namespaces with most events in
 * one, values of single predicates re-asserted over time (superseded), and a few blanket retractions.
 * Keeps a reservoir sample of the main namespace's events, to build recall keys and search queries
 * that hit.
 */
import { newEventId } from '../../src/common/ids.ts';
import type { StoredEvent } from '../../src/store/store.ts';
import { ALLERGENS, CITIES, COLORS, FIRST_NAMES, LAST_NAMES, TIMEZONES, vocabulary } from './words.ts';

/** A small fast seeded PRNG (mulberry32), uniform in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws ranks 0..n-1 with P(r) proportional to 1 / (r + 1 + q)^s (Zipf-Mandelbrot). */
export class Zipf {
  readonly #cdf: Float64Array;
  constructor(n: number, s = 1, q = 0) {
    this.#cdf = new Float64Array(n);
    let sum = 0;
    for (let r = 0; r < n; r++) {
      sum += 1 / (r + 1 + q) ** s;
      this.#cdf[r] = sum;
    }
    for (let r = 0; r < n; r++) this.#cdf[r] = (this.#cdf[r] as number) / sum;
  }
  draw(u: number): number {
    const cdf = this.#cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A namespace and its share of the events. */
export interface NamespaceShare {
  namespace: string;
  tenant: string;
  agent: string;
  weight: number;
}

/** Where the benchmark reads and writes: it holds most events. */
export const MAIN_NAMESPACE: NamespaceShare = { namespace: 'acme:main', tenant: 'acme', agent: 'main', weight: 0.8 };

export const NAMESPACES: readonly NamespaceShare[] = [
  MAIN_NAMESPACE,
  { namespace: 'acme:support', tenant: 'acme', agent: 'support', weight: 0.08 },
  { namespace: 'acme:sales', tenant: 'acme', agent: 'sales', weight: 0.06 },
  { namespace: 'globex:assistant', tenant: 'globex', agent: 'assistant', weight: 0.04 },
  { namespace: 'initech:helpdesk', tenant: 'initech', agent: 'helpdesk', weight: 0.02 },
];

/** Predicates of the `personal` registry (plus `note`) with their share of events. */
const PREDICATE_MIX: readonly [string, number][] = [
  ['note', 0.52],
  ['prefers', 0.14],
  ['favorite_color', 0.07],
  ['lives_in', 0.07],
  ['knows', 0.06],
  ['name', 0.04],
  ['allergy', 0.04],
  ['timezone', 0.03],
  ['birthday', 0.02],
];
/** Single-cardinality predicates (a blanket retraction targets one of these). */
const SINGLE = ['name', 'favorite_color', 'lives_in', 'timezone', 'birthday'];

/** A sampled event of the main namespace (its value as text). */
export interface SampledFact {
  subject: string;
  predicate: string;
  text: string;
}

/** Subjects used when `total` events are loaded: ~20 events per subject, 1,000..50,000. */
export function subjectsFor(total: number): number {
  return Math.min(50_000, Math.max(1_000, Math.round(total / 20)));
}

/** Generates events batch by batch; deterministic for a seed. */
export class MemoryDataset {
  readonly #rand: () => number;
  readonly #vocab = vocabulary(12_000);
  readonly #words = new Zipf(this.#vocab.length, 1, 10);
  readonly #cities = new Zipf(CITIES.length, 1, 5);
  readonly #colors = new Zipf(COLORS.length, 1, 3);
  #subjects = 0;
  #subjectZipf: Zipf | null = null;
  #clock: number;
  #made = 0;
  readonly #sample: SampledFact[] = [];
  readonly #sampleSize: number;
  #mainSeen = 0;

  /**
   * @param seed PRNG seed
   * @param startMs observed_at of the first event; each next one is 20 ms later
   */
  constructor(seed: number, startMs: number, sampleSize = 4096) {
    this.#rand = rng(seed);
    this.#clock = startMs;
    this.#sampleSize = sampleSize;
  }

  /** Events made so far. */
  get made(): number {
    return this.#made;
  }

  /** The reservoir sample of main-namespace events (uniform over those made). */
  get sample(): readonly SampledFact[] {
    return this.#sample;
  }

  /** The vocabulary of note and preference words, most common first. */
  get vocabulary(): readonly string[] {
    return this.#vocab;
  }

  /** Sets how many distinct subjects events are spread over from now on. */
  useSubjects(n: number): void {
    if (n === this.#subjects) return;
    this.#subjects = n;
    this.#subjectZipf = new Zipf(n, 1, 200);
  }

  /** The subject with index `k` ("first last k"). */
  subjectName(k: number): string {
    const f = FIRST_NAMES[(k * 7919) % FIRST_NAMES.length] as string;
    const l = LAST_NAMES[(k * 104729 + 13) % LAST_NAMES.length] as string;
    return `${f} ${l} ${k}`;
  }

  /** A random subject, hot ones more often. */
  randomSubject(): string {
    if (!this.#subjectZipf) throw new Error('call useSubjects first');
    // Scatter ranks over indexes so hot subjects are not all alphabetically first.
    const rank = this.#subjectZipf.draw(this.#rand());
    return this.subjectName((rank * 2654435761) % this.#subjects);
  }

  /** `n` content words from the Zipf vocabulary. */
  words(n: number): string {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.#vocab[this.#words.draw(this.#rand())] as string);
    return out.join(' ');
  }

  #pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.#rand() * list.length)] as T;
  }

  #weighted<T>(items: readonly (readonly [T, number])[]): T {
    let u = this.#rand();
    for (const [item, w] of items) {
      u -= w;
      if (u < 0) return item;
    }
    return items[items.length - 1]?.[0] as T;
  }

  #value(predicate: string): string {
    switch (predicate) {
      case 'note':
        return this.words(4 + Math.floor(this.#rand() * 7));
      case 'prefers':
        return this.words(1 + Math.floor(this.#rand() * 3));
      case 'favorite_color':
        return COLORS[this.#colors.draw(this.#rand())] as string;
      case 'lives_in':
        return CITIES[this.#cities.draw(this.#rand())] as string;
      case 'knows':
        return this.randomSubject();
      case 'name':
        return `${this.#pick(FIRST_NAMES)} ${this.#pick(LAST_NAMES)}`;
      case 'allergy':
        return this.#pick(ALLERGENS);
      case 'timezone':
        return this.#pick(TIMEZONES);
      case 'birthday': {
        const y = 1950 + Math.floor(this.#rand() * 55);
        const m = 1 + Math.floor(this.#rand() * 12);
        const d = 1 + Math.floor(this.#rand() * 28);
        return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
      }
      default:
        throw new Error(`no generator for predicate ${predicate}`);
    }
  }

  /** The next `n` events. */
  next(n: number): StoredEvent[] {
    const out: StoredEvent[] = [];
    for (let i = 0; i < n; i++) {
      const ns = this.#weighted(NAMESPACES.map((s) => [s, s.weight] as const));
      const subject = this.randomSubject();
      const retraction = this.#rand() < 0.005;
      const predicate = retraction ? this.#pick(SINGLE) : this.#weighted(PREDICATE_MIX);
      const value = retraction ? null : this.#value(predicate);
      const observedAt = this.#clock;
      this.#clock += 20;
      const evidence = !retraction && this.#rand() < 0.05 ? `said in chat: ${this.words(6)}` : null;
      out.push({
        id: newEventId(observedAt),
        namespace: ns.namespace,
        tenant: ns.tenant,
        subject,
        predicate,
        value,
        valueKey: value === null ? null : value.toLowerCase(),
        retraction,
        kind: null,
        confidence: 1,
        source: null,
        evidence,
        observedAt,
        recordedAt: observedAt,
        actor: { tenant: ns.tenant, agent: ns.agent, session: `${ns.agent}-pod-${this.#made % 7}`, keyId: null },
      });
      this.#made++;
      if (ns === MAIN_NAMESPACE && value !== null) {
        // Reservoir sampling (algorithm R) over main-namespace assertions.
        this.#mainSeen++;
        const fact = { subject, predicate, text: value };
        if (this.#sample.length < this.#sampleSize) this.#sample.push(fact);
        else {
          const j = Math.floor(this.#rand() * this.#mainSeen);
          if (j < this.#sampleSize) this.#sample[j] = fact;
        }
      }
    }
    return out;
  }
}

/** The exact recall of one fact: `GET /v1/memories?subject=…&predicate=…`. */
export function recallRequest(k: { subject: string; predicate: string }): { method: 'GET'; path: string } {
  return { method: 'GET', path: `/v1/memories?subject=${encodeURIComponent(k.subject)}&predicate=${k.predicate}` };
}
