/**
 * @module
 * Crash safety of the local runtime: each live instance has a record `<stateDir>/<name>.json` (its process
 * group and the gateway that owns it). At start-up, records whose owner is dead (killed with SIGKILL, no
 * 'exit' handler ran) are reaped: their processes are killed, but only those whose /proc environ still
 * shows `TETHER_INSTANCE=<name>` (a reused pid is left alone). Linux /proc only; elsewhere nothing is killed.
 * Used by local-runtime.ts.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../common/log.ts';

/** One instance record. */
interface InstanceRecord {
  instance: string;
  /** Process group id (= the instance's pid, it leads its group). */
  pgid: number;
  /** Pid of the gateway process that started it. */
  owner: number;
}

/** The default state folder: one per OS user under the temp folder. */
export function defaultStateDir(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = String(process.getuid?.() ?? 'user');
  }
  return join(tmpdir(), `tether-runtime-${user}`);
}

/** Records a started instance (synchronously: the record must exist before anything can kill us). */
export function recordInstance(dir: string, instance: string, pgid: number): void {
  const rec: InstanceRecord = { instance, pgid, owner: process.pid };
  writeFileSync(join(dir, `${instance}.json`), JSON.stringify(rec));
}

/** Drops the record of an instance that ended. */
export function forgetInstance(dir: string, instance: string): void {
  rmSync(join(dir, `${instance}.json`), { force: true });
}

/**
 * Kills the leftovers of dead gateways recorded in `dir` (created when missing) and drops their records.
 * Records of a live owner (a running gateway, this process included) are kept.
 * @returns the number of processes killed
 */
export function reapOrphans(dir: string, log: Logger): number {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let killed = 0;
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.json')) continue;
    const path = join(dir, file);
    let rec: InstanceRecord;
    try {
      rec = JSON.parse(readFileSync(path, 'utf8')) as InstanceRecord;
    } catch {
      rmSync(path, { force: true });
      continue;
    }
    if (isAlive(rec.owner)) continue; // a running gateway (this process included) owns it
    const pids = verifiedMembers(rec.pgid, rec.instance);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
    if (pids.length > 0) log.warn({ instance: rec.instance, pids, owner: rec.owner }, 'killed orphaned instance');
    rmSync(path, { force: true });
  }
  return killed;
}

/** True when `pid` is a live process (not a zombie). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return statOf(pid)?.state !== 'Z';
}

/** The members of process group `pgid` whose environment names `instance`. */
function verifiedMembers(pgid: number, instance: string): number[] {
  const marker = `TETHER_INSTANCE=${instance}`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const st = statOf(pid);
    if (st === undefined || st.pgrp !== pgid || st.state === 'Z') continue;
    if (hasEnv(pid, marker)) out.push(pid);
  }
  return out;
}

function statOf(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '', pgrp: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

function hasEnv(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry);
  } catch {
    return false;
  }
}
