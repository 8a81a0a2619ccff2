/**
 * @module
 * One isolated instance (the `Sandbox` of sandbox.ts): builds its launch command (join the cgroups,
 * or have the launcher that waits in them run the rest: waiting-launcher.ts; enter the network
 * namespace, drop to its uid, bubblewrap with its view), pauses it with the cgroup
 * freezer (SIGSTOP without one), signals every process it has, kills it when the kernel reports an
 * out-of-memory kill inside it, and releases what namespaces-isolation.ts set up for it.
 */
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from '../../../common/log.ts';
import type { InstanceSpec } from '../../runtime.ts';
import type { SlotPlan } from './address-plan.ts';
import type { InstanceCgroup } from './cgroups.ts';
import { bwrapArgs, isInside, type Mask, TOKEN_DIR, WORK_DIR } from './filesystem-view.ts';
import type { HostCapabilities } from './host-probe.ts';
import type { LaunchPlan, Sandbox } from './sandbox.ts';
import type { ThawWatchdog } from './thaw-watchdog.ts';
import { reachableWithin, type Viewer } from './view-access.ts';
import { WaitingLauncher } from './waiting-launcher.ts';

/** The port an instance listens on inside its own network namespace. */
export const SANDBOX_PORT = 8080;
/** Joins the cgroups given as arguments, then becomes the command: nothing runs before it is inside them. */
const JOIN_CGROUPS =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';
/** Bind-mounts each (source, stage) pair given as arguments (as root, in a mount namespace of its own), then becomes the command. */
const BIND_STAGES =
  'm=$1; n=$2; shift 2; while [ "$n" -gt 0 ]; do "$m" --bind "$1" "$2" || exit 125; shift 2; n=$((n-1)); done; exec "$@"';
const OOM_CHECK_MS = 250;

/** What namespaces-isolation.ts prepared for one instance. */
export interface SandboxParts {
  spec: InstanceSpec;
  plan: SlotPlan | undefined;
  uid: number | undefined;
  /** Whose rights bubblewrap resolves paths with (the instance's uid, else this process's). */
  viewer: Viewer;
  cgroup: InstanceCgroup | undefined;
  /** Told of the cgroup before its first freeze, to thaw it should this process die (thaw-watchdog.ts). */
  thawWatchdog: ThawWatchdog;
  /** A launcher already inside (some of) `cgroup`, made with the spare slot (cleanup cancels it when unused). */
  waiting: WaitingLauncher | undefined;
  view: Parameters<typeof bwrapArgs>[0];
  memory: { from: URL; to: string } | undefined;
  hidden: readonly string[];
  tools: HostCapabilities['tools'];
  log: Logger;
  cleanup: Array<() => Promise<void> | void>;
}

/** One isolated instance. */
export class NamespacesSandbox implements Sandbox {
  readonly host: string;
  readonly port: number;
  readonly #p: SandboxParts;
  #pid = 0;
  #oomTimer: NodeJS.Timeout | undefined;
  #released: Promise<void> | undefined;

  constructor(p: SandboxParts) {
    this.#p = p;
    this.host = p.plan?.instanceIp ?? '127.0.0.1';
    this.port = p.plan ? SANDBOX_PORT : 0;
  }

  launch(argv: readonly string[], env: Record<string, string>): LaunchPlan {
    const p = this.#p;
    const shown = [...p.view.readOnly, ...p.view.system.map((s) => s.path)];
    const view = { ...p.view, masks: masksWithin(p.hidden, shown, p.viewer) };
    const e: Record<string, string> = { ...env, HOME: WORK_DIR, TMPDIR: '/tmp', TETHER_WORK_DIR: WORK_DIR };
    if (p.spec.tokenFile) e.TETHER_TOKEN_FILE = `${TOKEN_DIR}/${basename(p.spec.tokenFile)}`;
    if (p.memory && e.TETHER_URL && sameOrigin(e.TETHER_URL, p.memory.from)) e.TETHER_URL = p.memory.to;
    const { sh, bwrap, nsenter, setpriv } = p.tools;
    const inner = [bwrap as string, ...bwrapArgs(view), '--', ...argv];
    const withUid =
      p.uid === undefined
        ? inner
        : [setpriv as string, `--reuid=${p.uid}`, `--regid=${p.uid}`, '--clear-groups', '--', ...inner];
    const stages = Object.entries(p.view.staged ?? {});
    const { unshare, mount } = p.tools;
    const stageCmd = [unshare as string, '--mount', '--propagation', 'private', '--', sh as string, '-c', BIND_STAGES];
    const withStages =
      stages.length === 0
        ? withUid
        : [...stageCmd, 'tether-stage', mount as string, String(stages.length), ...stages.flat(), ...withUid];
    const withNet = p.plan ? [nsenter as string, `--net=/run/netns/${p.plan.netns}`, '--', ...withStages] : withStages;
    const procs = p.cgroup?.procsFiles ?? [];
    const waiting = p.waiting;
    if (waiting?.alive && WaitingLauncher.accepts(e)) {
      const [file, ...args] = withNet as [string, ...string[]];
      const plan = { file, args, env: e, cwd: p.spec.workingDir };
      const rest = procs.filter((f) => !waiting.joined.includes(f)); // the cpu cgroup, for a cpu limit
      return { ...plan, startWaiting: (output) => waiting.start(plan, output, rest) };
    }
    return {
      file: sh as string,
      args: ['-c', JOIN_CGROUPS, 'tether-sandbox', String(procs.length), ...procs, ...withNet],
      env: e,
      cwd: p.spec.workingDir,
    };
  }

  spawned(pid: number): void {
    this.#pid = pid;
    const cg = this.#p.cgroup;
    if (!cg) return;
    // v1 kills only the process the kernel chose; an instance over its memory goes as a whole.
    this.#oomTimer = setInterval(() => {
      if (cg.oomKills() === 0) return;
      clearInterval(this.#oomTimer);
      const limit = this.#p.spec.sandbox?.limits.memoryBytes;
      this.#p.log.warn(
        { instance: this.#p.spec.name, limitBytes: limit },
        'instance exceeded its memory limit: killed',
      );
      this.signal('SIGKILL');
    }, OOM_CHECK_MS);
    this.#oomTimer.unref();
  }

  async pause(): Promise<void> {
    const cg = this.#p.cgroup;
    const thaw = cg?.thawWrite;
    if (thaw) this.#p.thawWatchdog.watch(thaw.file, thaw.value);
    if (cg?.canFreeze) await cg.freeze();
    else this.#signalAll('SIGSTOP');
  }

  async resume(): Promise<void> {
    const cg = this.#p.cgroup;
    if (cg?.canFreeze) await cg.thaw();
    else this.#signalAll('SIGCONT');
  }

  signal(signal: NodeJS.Signals): void {
    this.#signalAll(signal);
    if (signal === 'SIGTERM' || signal === 'SIGKILL') {
      this.#p.cgroup?.thawNow();
      if (!this.#p.cgroup?.canFreeze) this.#signalAll('SIGCONT');
    }
  }

  release(): Promise<void> {
    this.#released ??= (async () => {
      clearInterval(this.#oomTimer);
      this.#p.cgroup?.signal('SIGKILL');
      for (const c of [...this.#p.cleanup].reverse()) {
        try {
          await c();
        } catch (err) {
          this.#p.log.warn({ instance: this.#p.spec.name, err: (err as Error).message }, 'sandbox cleanup failed');
        }
      }
    })();
    return this.#released;
  }

  /** At process exit (synchronous): kills the instance and deletes its network namespace. */
  abandonSync(): void {
    this.#p.cgroup?.signal('SIGKILL'); // the waiting launcher too, if unused: it is in these cgroups
    this.#p.cgroup?.thawNow();
    const ip = this.#p.tools.ip;
    if (this.#p.plan && ip) spawnSync(ip, ['netns', 'del', this.#p.plan.netns], { timeout: 2000 });
  }

  #signalAll(signal: NodeJS.Signals): void {
    const cg = this.#p.cgroup;
    // SIGTERM asks the command to stop in its grace period. Bubblewrap forwards no signal: the outer one
    // dies of it at once and --die-with-parent SIGKILLs the namespace, so the command's handler never ran
    // (an agent could not give its lease back). So SIGTERM goes to the command's processes only; the
    // wrappers exit when the command has, and SIGKILL after the grace still takes everything.
    if (signal === 'SIGTERM' && cg) {
      for (const pid of cg.pids()) if (!isBubblewrap(pid)) signalPid(pid, signal);
      return;
    }
    cg?.signal(signal);
    if (this.#pid > 0) {
      try {
        process.kill(-this.#pid, signal);
      } catch {
        // group gone
      }
    }
  }
}

/**
 * The hidden paths that exist and that the instance could reach inside something the view shows
 * (elsewhere, or behind a folder its uid cannot enter, they are unseen anyway: bubblewrap, running
 * as that uid, could not even place the mask there).
 */
function masksWithin(hidden: readonly string[], shown: readonly string[], viewer: Viewer): Mask[] {
  const out: Mask[] = [];
  for (const h of hidden) {
    try {
      if (!shown.some((s) => isInside(h, s) && reachableWithin(h, s, viewer, statSync))) continue;
      out.push({ path: h, kind: lstatSync(h).isDirectory() ? 'dir' : 'file' });
    } catch {
      // does not exist: nothing to hide
    }
  }
  return out;
}

function sameOrigin(a: string, b: URL): boolean {
  try {
    return new URL(a).origin === b.origin;
  } catch {
    return false;
  }
}

/** True when `pid` runs bubblewrap (one of the sandbox's wrappers, not the instance's own command). */
function isBubblewrap(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'bwrap';
  } catch {
    return false;
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone meanwhile
  }
}
