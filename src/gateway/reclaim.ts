/**
 * @module
 * The instance-pressure policy (issue 11) and the one-request rule (issue 9 item 4): when a service is at
 * `max-scale` (or the gateway at `--max-instances`) and a new session waits, which bound instance gives way.
 * First an instance whose sessions never sent a second request (an anonymous hit holding a sandbox), the one
 * idle longest; else the least recently used paused instance (a paused session would otherwise hold its
 * sandbox until it expires and starve new ones). Its sessions end as in delete mode (reason `reclaimed`).
 * Instances with a request in flight, starting, stopping, warm or of another gateway never give way; nor
 * does a running instance whose sessions are established (they idle out by `session-timeout`). Pure; used by
 * scheduler.ts.
 */
import type { InstanceEntry } from './state.ts';

/** The instance to reclaim among `candidates`, or undefined when none may give way. */
export function pickReclaim(candidates: Iterable<InstanceEntry>): InstanceEntry | undefined {
  let oneShot: InstanceEntry | undefined;
  let oneShotAt = Number.POSITIVE_INFINITY;
  let paused: InstanceEntry | undefined;
  let pausedAt = Number.POSITIVE_INFINITY;
  for (const i of candidates) {
    if (i.warm || i.foreign || i.inflight > 0 || i.sessions.size === 0) continue;
    if (i.state !== 'running' && i.state !== 'paused') continue;
    let last = 0;
    let established = false;
    for (const s of i.sessions) {
      last = Math.max(last, s.lastActive);
      if (s.requests > 1 || !s.confirmed) established = true;
    }
    if (!established && last < oneShotAt) {
      oneShot = i;
      oneShotAt = last;
    } else if (i.state === 'paused' && last < pausedAt) {
      paused = i;
      pausedAt = last;
    }
  }
  return oneShot ?? paused;
}
