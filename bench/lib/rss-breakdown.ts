/**
 * @module
 * Where a server process's resident bytes are, read from /proc while a bench runs: `RssSampler` polls
 * /proc/<pid>/status and, each time VmRSS reaches a new high, takes a breakdown (RssAnon / RssFile /
 * RssShmem, the largest mappings of /proc/<pid>/smaps grouped by kind, the main isolate's V8 heap from
 * /metrics). The breakdown of the highest sample is the one at the peak. Used by bench:memory-build.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const MiB = 1048576;
/** glibc's non-main malloc arenas are heaps of at most 64 MiB, aligned to 64 MiB (HEAP_MAX_SIZE). */
const ARENA = 64 * MiB;

/** Resident bytes of a process by kind, MiB. */
export interface RssBreakdown {
  /** Seconds since the sampler started. */
  at: number;
  /** What the bench was doing (its label when the sample was taken). */
  phase: string;
  rss: number;
  anon: number;
  file: number;
  shmem: number;
  threads: number;
  /** Resident anonymous and file bytes, MiB, by group (see `groupOf`). */
  groups: Record<string, number>;
  /** The main isolate's V8 heap (committed / used) and external memory, MiB, from /metrics. */
  mainHeap?: { total: number; used: number; external: number };
}

interface Mapping {
  start: number;
  end: number;
  perms: string;
  name: string;
  rss: number;
}

/** The mappings of /proc/<pid>/smaps with their resident bytes. */
function readSmaps(pid: number): Mapping[] {
  const out: Mapping[] = [];
  let cur: Mapping | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      cur = {
        start: Number.parseInt(head[1] as string, 16),
        end: Number.parseInt(head[2] as string, 16),
        perms: head[3] as string,
        name: head[4] ?? '',
        rss: 0,
      };
      out.push(cur);
    } else if (cur && line.startsWith('Rss:')) cur.rss = Number(/(\d+)/.exec(line)?.[1]) * 1024;
  }
  return out;
}

/**
 * The group of each mapping: a named file (by basename; the database's `-shm` and the node binary
 * stand out), `[heap]` (the main malloc arena), `[stack]`, `malloc arenas` (an anonymous mapping on a
 * 64 MiB boundary whose reserved tail, `---p`, ends on the next one), `thread stacks` (anonymous after
 * a guard page), and `other anon` (V8 heaps of every isolate, large mallocs, SQLite's page caches).
 */
function groupOf(maps: Mapping[], i: number): string {
  const m = maps[i] as Mapping;
  if (m.name.startsWith('/')) return `file ${basename(m.name)}`;
  if (m.name === '[heap]' || m.name === '[stack]') return m.name;
  if (m.name) return `other ${m.name}`;
  const next = maps[i + 1];
  const arenaHead =
    m.start % ARENA === 0 && next?.perms === '---p' && next.start === m.end && next.end - m.start === ARENA;
  if (arenaHead || (m.start % ARENA === 0 && m.end - m.start === ARENA)) return 'malloc arenas';
  const prev = maps[i - 1];
  if (prev?.perms === '---p' && prev.end === m.start && prev.end - prev.start === 4096 && !prev.name)
    return 'thread stacks';
  return 'other anon';
}

/** `Name: N kB` of /proc/<pid>/status, MiB. */
function statusMiB(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status);
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** A prom-client gauge's value from /metrics text. */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

/** Polls a process's RSS and keeps the breakdown of its highest sample. */
export class RssSampler {
  readonly #pid: number;
  readonly #metricsUrl: string | undefined;
  readonly #t0 = performance.now();
  readonly #timer: NodeJS.Timeout;
  #high = 0;
  /** The breakdown at the highest VmRSS seen (the peak, to within one poll). */
  peak: RssBreakdown | undefined;
  /** What the bench is doing now, recorded with each breakdown. */
  phase = 'idle';

  /**
   * @param metricsUrl the server's /metrics (prom-client's default metrics), for the main isolate's heap
   * @param everyMs poll interval
   */
  constructor(pid: number, metricsUrl?: string, everyMs = 250) {
    this.#pid = pid;
    this.#metricsUrl = metricsUrl;
    this.#timer = setInterval(() => void this.#poll(), everyMs);
    this.#timer.unref();
  }

  /** A breakdown now (e.g. at the end), whatever the RSS. */
  async sample(): Promise<RssBreakdown> {
    const status = readFileSync(`/proc/${this.#pid}/status`, 'utf8');
    const maps = readSmaps(this.#pid);
    const groups: Record<string, number> = {};
    maps.forEach((m, i) => {
      if (m.rss === 0) return;
      const g = groupOf(maps, i);
      groups[g] = (groups[g] ?? 0) + m.rss / MiB;
    });
    const b: RssBreakdown = {
      at: (performance.now() - this.#t0) / 1000,
      phase: this.phase,
      rss: statusMiB(status, 'VmRSS'),
      anon: statusMiB(status, 'RssAnon'),
      file: statusMiB(status, 'RssFile'),
      shmem: statusMiB(status, 'RssShmem'),
      threads: Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]),
      groups,
    };
    if (this.#metricsUrl) {
      try {
        const text = await (await fetch(this.#metricsUrl, { signal: AbortSignal.timeout(2000) })).text();
        b.mainHeap = {
          total: metric(text, 'tether_nodejs_heap_size_total_bytes') / MiB,
          used: metric(text, 'tether_nodejs_heap_size_used_bytes') / MiB,
          external: metric(text, 'tether_nodejs_external_memory_bytes') / MiB,
        };
      } catch {
        // a busy server may not answer in time: the breakdown goes without it
      }
    }
    return b;
  }

  async #poll(): Promise<void> {
    let rss: number;
    try {
      rss = statusMiB(readFileSync(`/proc/${this.#pid}/status`, 'utf8'), 'VmRSS');
    } catch {
      return; // exited
    }
    if (!(rss > this.#high + 1)) return;
    this.#high = rss;
    try {
      const b = await this.sample();
      if (!this.peak || b.rss >= this.peak.rss) this.peak = b;
    } catch {
      // exited between the two reads
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/** A breakdown as lines: the totals, then the groups of at least `minMiB`, largest first. */
export function formatBreakdown(label: string, b: RssBreakdown, minMiB = 2): string[] {
  const f = (n: number) => n.toFixed(1);
  const lines = [
    `  ${label} (t=${b.at.toFixed(0)} s, ${b.phase}): RSS ${f(b.rss)} MiB = anon ${f(b.anon)} + file ${f(b.file)} + shmem ${f(b.shmem)}; ${b.threads} threads` +
      (b.mainHeap
        ? `; main isolate heap ${f(b.mainHeap.total)} committed / ${f(b.mainHeap.used)} used, external ${f(b.mainHeap.external)}`
        : ''),
  ];
  const groups = Object.entries(b.groups)
    .filter(([, v]) => v >= minMiB)
    .sort((a, c) => c[1] - a[1]);
  lines.push(`    ${groups.map(([g, v]) => `${g} ${f(v)}`).join(', ')}`);
  return lines;
}
