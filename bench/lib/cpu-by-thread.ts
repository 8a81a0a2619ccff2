/**
 * @module
 * Who had the machine's cores during each row of bench:fairness (`--loop-trace`): the run time of every
 * thread of tenant B's server (its loop; its other threads at nice 0, which are V8's platform threads
 * doing every isolate's GC work, libuv's and the checkpointer's; its threads at a lower priority, the read
 * and import workers), of A's client (the bench's own process) and of B's client, read from Linux's
 * `/proc/<pid>/task/<tid>/schedstat` (ns) before and after the row. With the loop trace's "waiting for a
 * core" it says whose work the loop waited behind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';

/** A thread's run time (ns) and nice value when read. */
interface ThreadRun {
  ns: number;
  nice: number;
}

/** The run times read at one moment: B's server by thread, and the clients' processes in all (ns). */
export interface CpuSnapshot {
  serverPid: number;
  server: Map<number, ThreadRun>;
  clientA: number;
  clientB: number;
}

/** Run time (ns) of each thread of `pid` (threads gone by the time they are read are left out). */
export function threadRuns(pid: number): Map<number, ThreadRun> {
  const runs = new Map<number, ThreadRun>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return runs; // the process is gone
  }
  for (const t of tids) {
    const tid = Number(t);
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
      runs.set(tid, { ns, nice: getPriority(tid) });
    } catch {
      // ended between the listing and the read
    }
  }
  return runs;
}

const total = (runs: Map<number, ThreadRun>) => [...runs.values()].reduce((s, r) => s + r.ns, 0);

/** Reads B's server by thread, and A's and B's client processes. */
export function cpuSnapshot(serverPid: number, clientAPid: number, clientBPid: number): CpuSnapshot {
  return {
    serverPid,
    server: threadRuns(serverPid),
    clientA: total(threadRuns(clientAPid)),
    clientB: total(threadRuns(clientBPid)),
  };
}

/** Ms of run time between two snapshots, by whom. */
export interface CpuShare {
  /** B's server: its event loop; its other threads at nice 0; its threads at a lower priority. */
  loop: number;
  serverNice0: number;
  serverNiced: number;
  clientA: number;
  clientB: number;
}

/**
 * What each ran between `before` and `after` (ms). A thread started meanwhile counts from 0; its nice
 * value is the one read last (the workers lower theirs as they start).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuShare {
  const share: CpuShare = { loop: 0, serverNice0: 0, serverNiced: 0, clientA: 0, clientB: 0 };
  for (const [tid, run] of after.server) {
    const ms = (run.ns - (before.server.get(tid)?.ns ?? 0)) / 1e6;
    if (tid === after.serverPid) share.loop += ms;
    else if (run.nice > 0) share.serverNiced += ms;
    else share.serverNice0 += ms;
  }
  share.clientA = (after.clientA - before.clientA) / 1e6;
  share.clientB = (after.clientB - before.clientB) / 1e6;
  return share;
}
