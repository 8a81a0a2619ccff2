/**
 * @module
 * Crash safety of the local runtime: each live instance has a record `<stateDir>/<name>.json` (its process
 * group, process start time, port and the gateway process that manages it). Instances outlive a gateway that
 * stops or is killed; the next runtime lists the records of dead owners (`leftovers`) and the gateway adopts or
 * deletes each one. A record is trusted only while its pid is alive, has the recorded start time
 * (`/proc/<pid>/stat` field 22) and its /proc environ names the instance: a reused pid is never touched.
 * Linux /proc only; elsewhere nothing is listed. Used by local-runtime.ts.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** One instance record. */
export interface InstanceRecord {
  instance: string;
  service: string;
  /** Process group id (= the instance's pid, it leads its group). */
  pgid: number;
  /** Start time of the process (`/proc/<pid>/stat` field 22, clock ticks after boot). */
  startTime: string;
  host: string;
  port: number;
  /** Pid of the gateway process that manages it; 0 once that runtime detached (nobody manages it). */
  owner: number;
  /**
   * Started in a sandbox (isolation/): never adopted, since bubblewrap ends it with its gateway
   * (`--die-with-parent`) and its network fence belongs to that gateway's process; a leftover is killed.
   */
  isolated?: boolean;
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

/** Creates the state folder (mode 0700) when missing. */
export function ensureStateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Records a started or adopted instance (synchronously: the record must exist before anything can kill us). */
export function recordInstance(dir: string, rec: InstanceRecord): void {
  writeFileSync(join(dir, `${rec.instance}.json`), JSON.stringify(rec), { mode: 0o600 });
}

/** Drops the record (and the output files) of an instance that ended. */
export function forgetInstance(dir: string, instance: string): void {
  for (const ext of ['json', 'out', 'err']) rmSync(join(dir, `${instance}.${ext}`), { force: true });
}

/**
 * The records in `dir` whose owner is dead and whose process is still the recorded one; records of dead
 * instances are dropped on the way. Records of a live owner (a running gateway, this process included) are kept
 * and not listed.
 */
export function leftovers(dir: string): InstanceRecord[] {
  ensureStateDir(dir);
  const out: InstanceRecord[] = [];
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.json')) continue;
    let rec: InstanceRecord;
    try {
      rec = JSON.parse(readFileSync(join(dir, file), 'utf8')) as InstanceRecord;
    } catch {
      rmSync(join(dir, file), { force: true });
      continue;
    }
    if (ownerAlive(rec.owner)) continue;
    if (isSameProcess(rec.pgid, rec.startTime, rec.instance)) out.push(rec);
    else forgetInstance(dir, rec.instance);
  }
  return out;
}

/** The record of `instance`, or undefined when there is none (or it cannot be read). */
export function readRecord(dir: string, instance: string): InstanceRecord | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, `${instance}.json`), 'utf8')) as InstanceRecord;
  } catch {
    return undefined;
  }
}

/** True when `pid` runs (not a zombie), started at `startTime` and its environment names `instance`. */
export function isSameProcess(pid: number, startTime: string, instance: string): boolean {
  const st = statOf(pid);
  if (st === undefined || st.state === 'Z' || st.startTime !== startTime) return false;
  return hasEnv(pid, `TETHER_INSTANCE=${instance}`);
}

/** True when the record's owner is a live runtime (0: detached, nobody). */
export function ownerAlive(owner: number): boolean {
  return owner > 0 && isAlive(owner);
}

/** True when `pid` is a live process (not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const st = statOf(pid);
  return st !== undefined && st.state !== 'Z';
}

/** State letter, process group and start time of `pid` from /proc, or undefined when it is gone. */
export function statOf(pid: number): { state: string; pgrp: number; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): field 3 is rest[0].
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '', pgrp: Number(rest[2]), startTime: rest[19] ?? '' };
  } catch {
    return undefined;
  }
}

/** True when the /proc environ of `pid` holds `entry` (`NAME=value`). */
export function hasEnv(pid: number, entry: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(entry);
  } catch {
    return false;
  }
}
