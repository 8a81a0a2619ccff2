/**
 * @module
 * Helpers for isolation tests: a LocalRuntime with `--isolation namespaces` (sandbox folder in tmp,
 * closed after the test, which also checks nothing of ours is left: network namespaces, fence table),
 * the probe app's instance spec, and JSON requests to an instance.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { silentLogger } from '../../../../src/common/log.ts';
import { createIsolation } from '../../../../src/runtime/local/isolation/choose-isolation.ts';
import type { HostCapabilities } from '../../../../src/runtime/local/isolation/host-probe.ts';
import { LocalRuntime } from '../../../../src/runtime/local/local-runtime.ts';
import type { InstanceSpec, StartedInstance } from '../../../../src/runtime/runtime.ts';
import { isGone } from '../../../gateway/helpers/harness.ts';

/** The probe app (test/fixtures/probe-app.mjs). */
export const PROBE = resolve(import.meta.dirname, '../../../fixtures/probe-app.mjs');

/** A temp folder the instances' uids may traverse (mkdtemp makes 0700), removed after the test. */
export async function openTempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A runtime isolating with namespaces; closed after the test. */
export async function isolatedRuntime(
  t: TestContext,
  o: { hidden?: string[]; memoryUrl?: string; caps?: HostCapabilities } = {},
): Promise<LocalRuntime> {
  // Not openTempDir: node runs t.after hooks first-in first-out, and the runtime must close (its instances,
  // networks and spare slot gone) before its folder is removed.
  const dir = await mkdtemp(join(tmpdir(), 'tether-sbx-'));
  chmodSync(dir, 0o755);
  const isolation = await createIsolation({
    requested: 'namespaces',
    why: 'test',
    hidden: o.hidden ?? [],
    memoryUrl: o.memoryUrl,
    caps: o.caps,
    dir,
    log: silentLogger(),
  });
  const rt = new LocalRuntime({ log: silentLogger(), graceMs: 1000, isolation, stateDir: join(dir, 'state') });
  t.after(async () => {
    await rt.close();
    await rm(dir, { recursive: true, force: true });
  });
  return rt;
}

/** A spec running the probe app. */
export function probeSpec(over: Partial<InstanceSpec> = {}): InstanceSpec {
  const name = `probe-${Math.random().toString(36).slice(2, 7)}`;
  return {
    name,
    service: 'probe',
    configuration: 'probe',
    revision: 'probe-00001',
    argv: ['node', PROBE],
    env: {},
    workingDir: resolve(PROBE, '..'),
    startTimeoutMs: 15_000,
    sandbox: { readOnlyPaths: [], limits: {}, publicEgress: false },
    ...over,
  };
}

/** GET `path` on the instance, parsed. */
export async function ask<T = Record<string, unknown>>(inst: StartedInstance, path: string): Promise<T> {
  const r = await fetch(`http://${inst.host}:${inst.port}${path}`);
  return (await r.json()) as T;
}

/** Our network namespaces on this machine now (all runtimes'). */
export function ourNetworks(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith('tth'));
}

/** Live pids whose environment names the instance (what a leftover of it would be). */
export function processesOf(instance: string): number[] {
  const marker = `TETHER_INSTANCE=${instance}`;
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, 'utf8').split('\0').includes(marker) && !isGone(Number(e))) {
        out.push(Number(e));
      }
    } catch {
      // gone, or not readable
    }
  }
  return out;
}

/** Fields of `/proc/<pid>/stat` after the command name: [state, ppid, pgrp, session, …]; null when gone. */
function statFields(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** Live pids whose parent is `ppid` and whose command line contains `text`. */
export function childrenRunning(ppid: number, text: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      const f = statFields(pid);
      if (!f || f[0] === 'Z' || Number(f[1]) !== ppid) return false;
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    });
}

/** Live pids in session `sid` (a detached child's whole family). */
export function sessionMembers(sid: number): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      const f = statFields(pid);
      return f !== null && f[0] !== 'Z' && Number(f[3]) === sid;
    });
}
