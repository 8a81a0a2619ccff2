/**
 * @module
 * Cgroups of local instances: where they can be made (v1 controllers under this process's own cgroup
 * of each, or the v2 hierarchy), one cgroup per instance with the limits of its container, the freezer
 * (v1 `freezer.state` or v2 `cgroup.freeze`: the whole tree stops at once, signal handlers or not),
 * the member list (to signal every process, even one that left the process group), and OOM kills.
 * Synchronous file I/O on cgroupfs (each call is microseconds). Used by namespaces-isolation.ts.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A controller we use. */
export type Controller = 'freezer' | 'memory' | 'pids' | 'cpu';

/** Where instance cgroups of one controller are made. */
export interface ControllerPlace {
  kind: 'v1' | 'v2';
  /** Parent folder (created on demand). */
  dir: string;
}

/** The usable controllers of this machine. */
export type CgroupLayout = Partial<Record<Controller, ControllerPlace>>;

/** Limits from `resources.limits`. */
export interface CgroupLimits {
  memoryBytes?: number;
  /** CPU in thousandths of a core (`500m` = 500). */
  cpuMillicores?: number;
  pids?: number;
}

const CONTROLLERS: readonly Controller[] = ['freezer', 'memory', 'pids', 'cpu'];
const PARENT = 'tether';

/**
 * Reads the cgroup mounts and this process's own cgroups. A v1 controller wins over v2 (on a hybrid
 * machine the v2 hierarchy has no controllers, but its `cgroup.freeze` still works).
 * @param mountinfo text of /proc/self/mountinfo; @param ownCgroups text of /proc/self/cgroup
 */
export function parseCgroupLayout(mountinfo: string, ownCgroups: string, v2Controllers: string[]): CgroupLayout {
  const own = new Map<string, string>();
  for (const line of ownCgroups.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const c of (m[2] ?? '').split(',')) own.set(c, m[3] ?? '/');
  }
  const layout: CgroupLayout = {};
  let v2Mount: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const mountPoint = left.split(' ')[4];
    const [fstype, , superOpts = ''] = right.split(' ');
    if (!mountPoint) continue;
    if (fstype === 'cgroup2') v2Mount ??= mountPoint;
    if (fstype !== 'cgroup') continue;
    const opts = superOpts.split(',');
    for (const c of CONTROLLERS) {
      if (opts.includes(c) && !layout[c]) {
        layout[c] = { kind: 'v1', dir: join(mountPoint, own.get(c) ?? '/', PARENT) };
      }
    }
  }
  if (v2Mount) {
    const dir = join(v2Mount, PARENT);
    layout.freezer ??= { kind: 'v2', dir };
    for (const c of ['memory', 'pids', 'cpu'] as const) {
      if (v2Controllers.includes(c)) layout[c] ??= { kind: 'v2', dir };
    }
  }
  return layout;
}

/** The layout of this machine, keeping only the places we can write; undefined when none. */
export function detectCgroups(): CgroupLayout | undefined {
  let mountinfo: string;
  let own: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
    own = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return undefined;
  }
  const v2Root = /^\S+ \S+ \S+ \S+ (\S+) .* - cgroup2 /m.exec(mountinfo)?.[1];
  let v2Controllers: string[] = [];
  if (v2Root) {
    try {
      v2Controllers = readFileSync(join(v2Root, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    } catch {
      v2Controllers = [];
    }
  }
  const layout = parseCgroupLayout(mountinfo, own, v2Controllers);
  const usable: CgroupLayout = {};
  for (const [c, place] of Object.entries(layout) as Array<[Controller, ControllerPlace]>) {
    try {
      mkdirSync(place.dir, { recursive: true });
      if (place.kind === 'v2' && c !== 'freezer') enableV2(place.dir, c);
      usable[c] = place;
    } catch {
      // not writable here (no root, or a read-only cgroupfs): that controller is lost
    }
  }
  return Object.keys(usable).length > 0 ? usable : undefined;
}

/** Lets children of the v2 `dir` use `controller` (its parent, the hierarchy root, must allow it first). */
function enableV2(dir: string, controller: Controller): void {
  const parent = join(dir, '..');
  writeFileSync(join(parent, 'cgroup.subtree_control'), `+${controller}`);
  writeFileSync(join(dir, 'cgroup.subtree_control'), `+${controller}`);
}

/** Removes the shared parents when no instance cgroup is left in them (rmdir refuses a busy folder). */
export function removeCgroupParents(layout: CgroupLayout): void {
  for (const dir of new Set(Object.values(layout).map((p) => p.dir))) {
    try {
      rmdirSync(dir);
    } catch {
      // another runtime's instances are still there, or already gone
    }
  }
}

/** One instance's cgroups. */
export class InstanceCgroup {
  readonly #layout: CgroupLayout;
  readonly #name: string;
  readonly #dirs: string[];

  /** Creates `<parent>/<name>` for every controller of `layout`. */
  constructor(layout: CgroupLayout, name: string) {
    this.#layout = layout;
    this.#name = name;
    this.#dirs = [...new Set(Object.values(layout).map((p) => join(p.dir, name)))];
    for (const d of this.#dirs) mkdirSync(d, { recursive: true });
  }

  /** The `cgroup.procs` files a process writes its pid to, to join all of them. */
  get procsFiles(): string[] {
    return this.#dirs.map((d) => join(d, 'cgroup.procs'));
  }

  /** True when pause freezes the whole cgroup (else the caller falls back to SIGSTOP). */
  get canFreeze(): boolean {
    return this.#layout.freezer !== undefined;
  }

  /**
   * Applies the limits. An instance over its memory is killed by the kernel; on v2 the whole group
   * (`memory.oom.group`), on v1 the process chosen, the rest by the runtime when it sees `oomKills()` rise.
   */
  applyLimits(limits: CgroupLimits): void {
    const { memory, pids, cpu } = this.#layout;
    if (memory && limits.memoryBytes !== undefined) {
      const bytes = String(Math.floor(limits.memoryBytes));
      if (memory.kind === 'v1') {
        writeFileSync(this.#file('memory', 'memory.limit_in_bytes'), bytes);
        // Without swap accounting limits, a machine with swap would page instead of stopping the hog.
        writeIfPresent(this.#file('memory', 'memory.memsw.limit_in_bytes'), bytes);
      } else {
        writeFileSync(this.#file('memory', 'memory.max'), bytes);
        writeIfPresent(this.#file('memory', 'memory.swap.max'), '0');
        writeFileSync(this.#file('memory', 'memory.oom.group'), '1');
      }
    }
    if (pids && limits.pids !== undefined) {
      writeFileSync(this.#file('pids', 'pids.max'), String(Math.floor(limits.pids)));
    }
    if (cpu && limits.cpuMillicores !== undefined) {
      const period = 100_000;
      const quota = Math.max(1000, Math.round((limits.cpuMillicores / 1000) * period));
      if (cpu.kind === 'v1') {
        writeFileSync(this.#file('cpu', 'cpu.cfs_period_us'), String(period));
        writeFileSync(this.#file('cpu', 'cpu.cfs_quota_us'), String(quota));
      } else {
        writeFileSync(this.#file('cpu', 'cpu.max'), `${quota} ${period}`);
      }
    }
  }

  /** The file that thaws this instance and the value to write there (none without a freezer). */
  get thawWrite(): { file: string; value: string } | undefined {
    const f = this.#layout.freezer;
    if (!f) return undefined;
    return f.kind === 'v1'
      ? { file: this.#file('freezer', 'freezer.state'), value: 'THAWED' }
      : { file: this.#file('freezer', 'cgroup.freeze'), value: '0' };
  }

  /** Freezes every process of the instance; resolves once the kernel reports it frozen. */
  async freeze(timeoutMs = 2000): Promise<void> {
    const f = this.#layout.freezer;
    if (!f) throw new Error('no freezer');
    if (f.kind === 'v1') {
      writeFileSync(this.#file('freezer', 'freezer.state'), 'FROZEN');
      await until(() => readFileSync(this.#file('freezer', 'freezer.state'), 'utf8').trim() === 'FROZEN', timeoutMs);
    } else {
      writeFileSync(this.#file('freezer', 'cgroup.freeze'), '1');
      await until(() => /^frozen 1$/m.test(readFileSync(this.#file('freezer', 'cgroup.events'), 'utf8')), timeoutMs);
    }
  }

  /** Thaws the instance; resolves once the kernel reports it running. */
  async thaw(timeoutMs = 2000): Promise<void> {
    const f = this.#layout.freezer;
    if (!f) return;
    if (f.kind === 'v1') {
      writeFileSync(this.#file('freezer', 'freezer.state'), 'THAWED');
      await until(() => readFileSync(this.#file('freezer', 'freezer.state'), 'utf8').trim() === 'THAWED', timeoutMs);
    } else {
      writeFileSync(this.#file('freezer', 'cgroup.freeze'), '0');
      await until(() => /^frozen 0$/m.test(readFileSync(this.#file('freezer', 'cgroup.events'), 'utf8')), timeoutMs);
    }
  }

  /** Thaws without waiting (before a kill: a frozen process cannot run its exit). */
  thawNow(): void {
    const f = this.#layout.freezer;
    if (!f) return;
    try {
      if (f.kind === 'v1') writeFileSync(this.#file('freezer', 'freezer.state'), 'THAWED');
      else writeFileSync(this.#file('freezer', 'cgroup.freeze'), '0');
    } catch {
      // removed already
    }
  }

  /** Host pids of every process in the instance. */
  pids(): number[] {
    const out = new Set<number>();
    for (const file of this.procsFiles) {
      try {
        for (const l of readFileSync(file, 'utf8').split('\n')) if (l) out.add(Number(l));
      } catch {
        // removed already
      }
    }
    return [...out];
  }

  /** Sends `signal` to every process of the instance; returns how many were signalled. */
  signal(signal: NodeJS.Signals): number {
    let n = 0;
    for (const pid of this.pids()) {
      try {
        process.kill(pid, signal);
        n++;
      } catch {
        // gone meanwhile
      }
    }
    return n;
  }

  /** How many processes the kernel killed for memory in this instance. */
  oomKills(): number {
    const m = this.#layout.memory;
    if (!m) return 0;
    try {
      const text = readFileSync(this.#file('memory', m.kind === 'v1' ? 'memory.oom_control' : 'memory.events'), 'utf8');
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /**
   * Removes the cgroups once their processes are gone (waits up to `timeoutMs` for exiting ones). Generous:
   * a frozen instance first thaws, then takes its SIGKILL, and on a loaded machine that took over 3 s (its
   * cgroup was then left behind at shutdown); a process that is gone frees the wait at once.
   */
  async remove(timeoutMs = 10_000): Promise<void> {
    this.thawNow();
    await until(() => {
      for (const d of this.#dirs) {
        try {
          rmdirSync(d);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
          this.signal('SIGKILL');
          return false;
        }
      }
      return true;
    }, timeoutMs).catch(() => {});
  }

  #file(c: Controller, file: string): string {
    const place = this.#layout[c];
    if (!place) throw new Error(`no ${c} controller`);
    return join(place.dir, this.#name, file);
  }
}

function writeIfPresent(file: string, value: string): void {
  if (!existsSync(file)) return;
  try {
    writeFileSync(file, value);
  } catch {
    // e.g. swap accounting off: nothing to limit
  }
}

/** Polls `ok` with short growing delays (1, 2, 4 … 16 ms) until true, or rejects after `timeoutMs`. */
async function until(ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 0.25; ; delay = Math.min(delay * 2, 16)) {
    if (ok()) return;
    if (Date.now() > deadline) throw new Error(`cgroup did not settle within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, delay));
  }
}
