/**
 * @module
 * Signals and /proc observation for the local runtime's process groups: send a signal to a group, wait until
 * /proc shows a state (a pause is done only when it is seen), and kill the members of a group whose
 * environment still names an instance (a reused pid is never touched). Linux /proc only. Used by
 * local-runtime.ts and orphans.ts.
 */
import { readdirSync } from 'node:fs';
import { hasEnv, statOf } from './orphans.ts';

/** How long a pause or resume may take to show in /proc before it is reported as failed (ms). */
const OBSERVE_MS = 2000;

/** Sends `signal` to the process group led by `pid`; a group already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to signal
  }
}

/** Waits until the /proc state letter of `pid` satisfies `ok` (or the process is gone). */
export async function observeState(pid: number, ok: (state: string) => boolean, failure: string): Promise<void> {
  const deadline = Date.now() + OBSERVE_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
    const st = statOf(pid);
    if (st === undefined || st.state === 'Z' || ok(st.state)) return;
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** True when a /proc state letter is a stopped process. */
export function isStopped(state: string | undefined): boolean {
  return state === 'T' || state === 't';
}

/**
 * SIGKILLs the members of process group `pgid` whose environment names `instance`.
 * @returns the pids killed
 */
export function killVerifiedMembers(pgid: number, instance: string): number[] {
  const marker = `TETHER_INSTANCE=${instance}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const st = statOf(pid);
    if (st === undefined || st.pgrp !== pgid || st.state === 'Z' || !hasEnv(pid, marker)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // already gone
    }
  }
  return killed;
}
