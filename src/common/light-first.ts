/**
 * @module
 * Light requests first. One event loop serves every tenant, so a big request cut into time slices
 * (`TimeSlice`) still shares the loop turn for turn with the small ones: a small request passes
 * through several turns (body, checks, the writer's queue, the answer) and met one slice of big work
 * at each. Here each request holds a ticket from its first hook (`admit`) to its answer (`release`);
 * it is *light* until it first spends a time slice (`TimeSlice.yield` calls `leaveLightLane` with the
 * ticket of the request it works for, its owner), from then on *heavy*. The ticket is passed to the
 * heavy work by hand (the request's `lane`, an `AuthContext`'s, a `WriteContext`'s), not found in an
 * `AsyncLocalStorage`: on Node 20 one makes every promise of every request run async hooks, a share of
 * every request's time on the loop (docs/benchmarks.md). Heavy work waits between its slices while any
 * light request is in flight (`afterLightRequests`), so a small request meets at most the one slice that
 * was running when it arrived. The wait is bounded (`MAX_DEFER_MS`): under a steady stream of light
 * requests heavy work still gets a slice every few tens of ms, and a light request that itself waits on
 * heavy work (a write queued behind an import's chunk) cannot stall it. The state is per process, like
 * the loop it shares out: every server in the process takes part.
 */
import { performance } from 'node:perf_hooks';

/** Longest a slice of heavy work waits for light requests to finish, in ms. @default 20 */
export const MAX_DEFER_MS = 20;

/**
 * A request in flight longer than this no longer counts as light, in ms: a stream held open (an MCP
 * event stream) or a request waiting on something slow is not what heavy work should wait for.
 */
export const LIGHT_MAX_AGE_MS = 1_000;

/** One request in flight. */
export interface Ticket {
  light: boolean;
  readonly since: number;
}

const open = new Set<Ticket>();
let light = 0;
let waiters: (() => void)[] = [];

/** A new request: light until it spends a slice; `release` it once answered (twice is harmless). */
export function admit(): Ticket {
  const ticket: Ticket = { light: true, since: performance.now() };
  open.add(ticket);
  light++;
  return ticket;
}

/** The request is answered (or gone). */
export function release(ticket: Ticket): void {
  if (!open.delete(ticket)) return;
  if (ticket.light) demote(ticket);
}

/**
 * `ticket`'s request is heavy from now on: it no longer holds heavy work back. No ticket (background
 * work, a call from outside any request): nothing to demote.
 */
export function leaveLightLane(ticket: Ticket | null | undefined): void {
  if (ticket?.light && open.has(ticket)) demote(ticket);
}

/** Light requests in flight now (those older than `LIGHT_MAX_AGE_MS` stop counting). */
export function lightInFlight(): number {
  if (light === 0) return 0;
  const old = performance.now() - LIGHT_MAX_AGE_MS;
  for (const t of open) if (t.light && t.since < old) demote(t);
  return light;
}

/** Resolves once no light request is in flight, or after `capMs` (ms) at most. */
export function afterLightRequests(capMs = MAX_DEFER_MS): Promise<void> {
  if (lightInFlight() === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      waiters = waiters.filter((w) => w !== done);
      resolve();
    }, capMs);
    waiters.push(done);
  });
}

function demote(ticket: Ticket): void {
  ticket.light = false;
  light--;
  if (light > 0 || waiters.length === 0) return;
  const woken = waiters;
  waiters = [];
  for (const w of woken) w();
}
