/**
 * @module
 * Lowers the OS scheduling priority of the calling thread alone (Linux: `setpriority` on a thread's own
 * id acts on that thread, not the process). The worker threads (SQLite reads, imports) call it at
 * start, so on a machine of few cores their folds, answer building and parsing yield the CPU to the
 * event loop, which answers every tenant.
 * Where it cannot be done (no /proc/thread-self, another OS, refused) it changes nothing, quietly.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value the worker threads run at (0 is the default; 19 the lowest priority). */
export const WORKER_NICE = 10;

/** The calling thread's id (TID) and the nice value it now has; null where it could not be set. */
export interface ThreadPriority {
  tid: number;
  nice: number;
}

/**
 * Sets the calling thread's nice value to `nice` (only ever lowers the priority: an unprivileged
 * process may raise its nice value, not lower it).
 * @returns the thread's id and its nice value after the call, or null where this is not possible
 */
export function lowerThreadPriority(nice: number = WORKER_NICE): ThreadPriority | null {
  try {
    // "/proc/thread-self" links to "<pid>/task/<tid>" (Linux >= 3.17).
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return null;
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return { tid, nice: getPriority(tid) };
  } catch {
    return null;
  }
}
