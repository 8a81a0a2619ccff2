/**
 * @module
 * `--isolation namespaces`: each instance runs under bubblewrap with its own user, mount, PID, IPC and
 * UTS namespaces, as its own unprivileged uid (setpriv), in a network namespace of its own behind the
 * fence (network.ts, fence.ts), in cgroups with its container's limits and the freezer (cgroups.ts),
 * seeing only its filesystem view (filesystem-view.ts). Whatever the machine lacks (no root: no
 * network namespace, uid or cgroups) is left out, as choose-isolation.ts reported at start.
 * Used by local-runtime.ts through sandbox.ts.
 */

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../../common/log.ts';
import type { InstanceSpec } from '../../runtime.ts';
import { chooseRange, type SlotPlan } from './address-plan.ts';
import { type CgroupLayout, InstanceCgroup, removeCgroupParents } from './cgroups.ts';
import { Fence, type MemoryRoute, reapFences } from './fence.ts';
import { commandFiles, type SystemEntry } from './filesystem-view.ts';
import type { HostCapabilities } from './host-probe.ts';
import { NamespacesSandbox, SANDBOX_PORT } from './namespaces-sandbox.ts';
import { destroyNetwork, holdRange, hostNetworks } from './network.ts';
import { NetworkSlots } from './network-slots.ts';
import type { Isolation, Sandbox } from './sandbox.ts';
import { ThawWatchdog } from './thaw-watchdog.ts';
import { projectToken } from './token-projection.ts';
import { blockedAbove, outermost, unusable, type Viewer } from './view-access.ts';
import { WaitingLauncher } from './waiting-launcher.ts';

/** pids limit when the container sets none (a fork bomb stops there). */
export const DEFAULT_PIDS = 1024;
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];

/** Options of `NamespacesIsolation.create`. */
export interface NamespacesIsolationOptions {
  caps: HostCapabilities;
  /** Whether to give each instance a network namespace behind the fence (needs root, ip, nft, nsenter). */
  network: boolean;
  /** Whether to run each instance as its own uid (needs root and setpriv). */
  ownUid: boolean;
  /** The memory server URL handed to instances (`TETHER_URL`); rewritten to its address through the fence. */
  memoryUrl?: string;
  /** Host paths no instance may see, even inside a folder it sees (data folder, keys, authority, tokens). */
  hidden: readonly string[];
  /** Folder of per-instance work folders and records (created 0700). */
  dir: string;
  log: Logger;
}

interface SandboxRecord {
  owner: number;
  instance: string;
  netns?: string;
}

/** Builds sandboxes for one runtime. */
export class NamespacesIsolation implements Isolation {
  readonly mode = 'namespaces' as const;
  readonly #o: NamespacesIsolationOptions;
  readonly #system: SystemEntry[];
  readonly #fence: Fence | undefined;
  readonly #slots: NetworkSlots | undefined;
  readonly #memory: { url: URL; route: MemoryRoute } | undefined;
  readonly #live = new Set<NamespacesSandbox>();
  readonly #thawWatchdog = new ThawWatchdog();
  /** Launchers waiting in the cgroups of spare slots, by network namespace (waiting-launcher.ts). */
  readonly #waiting = new Map<string, { launcher: WaitingLauncher; cgroup: InstanceCgroup }>();
  #closed = false;
  /** Backstop for an exit without close(): kill, drop networks and the fence now; the next runtime reaps the rest. */
  readonly #exitSync = () => {
    for (const s of this.#live) s.abandonSync();
    for (const w of this.#waiting.values()) w.launcher.abandonSync();
    this.#slots?.abandonSync();
    if (this.#fence && this.#o.caps.tools.nft) {
      spawnSync(this.#o.caps.tools.nft, ['delete', 'table', 'inet', this.#fence.table], { timeout: 2000 });
    }
  };

  private constructor(o: NamespacesIsolationOptions, range: string | undefined, fence: Fence | undefined) {
    this.#o = o;
    this.#fence = fence;
    this.#system = systemEntries();
    this.#memory = memoryRoute(o.memoryUrl);
    if (range && fence) {
      this.#slots = new NetworkSlots({
        range,
        fence,
        memory: this.#memory?.route,
        port: SANDBOX_PORT,
        caps: o.caps,
        log: o.log,
        record: (plan) => writeRecord(join(o.dir, plan.netns), { owner: process.pid, instance: '', netns: plan.netns }),
        forget: (plan) => rmSync(join(o.dir, plan.netns), { recursive: true, force: true }),
        spareReady: (plan) => this.#launcherFor(plan),
      });
    }
    process.on('exit', this.#exitSync);
  }

  /** Reaps what dead runtimes left, picks the address range, creates this runtime's fence. */
  static async create(o: NamespacesIsolationOptions): Promise<NamespacesIsolation> {
    mkdirSync(o.dir, { recursive: true, mode: 0o711 });
    chmodSync(o.dir, 0o711);
    const { ip, nft } = o.caps.tools;
    await reapSandboxes(o, o.caps);
    if (!o.network || !ip || !nft) return new NamespacesIsolation(o, undefined, undefined);
    await reapFences(nft, isAlive);
    const nets = await hostNetworks(ip);
    const range = chooseRange(nets);
    await holdRange(ip, range);
    const fence = await Fence.create(nft, nets);
    o.log.info({ range, table: `inet ${fence.table}` }, 'instance networks and their fence');
    return new NamespacesIsolation(o, range, fence);
  }

  async prepare(spec: InstanceSpec): Promise<Sandbox> {
    const plan = await this.#slots?.take(spec.name, spec.sandbox?.publicEgress === true);
    const id = plan?.netns ?? `${spec.name}-${process.pid}`;
    const root = join(this.#o.dir, id);
    const w = plan ? this.#takeLauncher(plan) : undefined;
    const waiting = w?.launcher;
    const cleanup: Array<() => Promise<void> | void> = [];
    try {
      if (w) {
        // Its cgroups are the sandbox's own below; removed here too when prepare fails before they are made.
        cleanup.push(() => w.cgroup.remove());
        cleanup.push(() => w.launcher.cancel());
      }
      cleanup.push(() => rmSync(root, { recursive: true, force: true }));
      writeRecord(root, { owner: process.pid, instance: spec.name, netns: plan?.netns });
      if (plan) {
        const slots = this.#slots as NetworkSlots;
        cleanup.push(() => slots.release(plan));
      }
      const uid = this.#o.ownUid && plan ? plan.uid : undefined;
      const work = join(root, 'work');
      mkdirSync(work, { mode: 0o700 });
      if (uid !== undefined) chownSync(work, uid, uid);
      let cgroup: InstanceCgroup | undefined;
      if (this.#o.caps.cgroups) {
        // The cpu controller only for a cpu limit: a cgroup of its own with no quota limits nothing, and on a
        // busy machine its CFS group would get one task's share where the app's threads had one each.
        const { cpu, ...others } = this.#o.caps.cgroups;
        const layout = spec.sandbox?.limits.cpuMillicores === undefined ? others : this.#o.caps.cgroups;
        cgroup = new InstanceCgroup(layout, id);
        const c = cgroup;
        cleanup.push(() => c.remove());
        cgroup.applyLimits({ pids: DEFAULT_PIDS, ...spec.sandbox?.limits });
      }
      let tokenDir: string | undefined;
      if (spec.tokenFile) {
        const projection = projectToken(spec.tokenFile, join(root, 'token'), uid, (err) =>
          this.#o.log.warn({ instance: spec.name, err: err.message }, 'token copy into the sandbox failed'),
        );
        cleanup.push(() => projection.close());
        tokenDir = projection.dir;
      }
      const viewer: Viewer =
        uid === undefined ? { uid: process.getuid?.() ?? 0, gids: process.getgroups?.() ?? [] } : { uid, gids: [uid] };
      const readOnly = outermost(this.#readOnly(spec));
      const staged = this.#stage(spec, readOnly, viewer, root);
      const sandbox: NamespacesSandbox = new NamespacesSandbox({
        spec,
        plan,
        uid,
        viewer,
        cgroup,
        thawWatchdog: this.#thawWatchdog,
        waiting,
        view: {
          hostname: spec.name,
          system: this.#system,
          readOnly,
          staged,
          masks: [],
          workDir: work,
          tokenDir,
          workingDir: spec.workingDir,
          unshareNet: false,
        },
        memory: plan && this.#memory ? { from: this.#memory.url, to: reachable(this.#memory.url, plan) } : undefined,
        hidden: this.#o.hidden,
        tools: this.#o.caps.tools,
        log: this.#o.log,
        cleanup: [...cleanup, () => void this.#live.delete(sandbox)],
      });
      this.#live.add(sandbox);
      return sandbox;
    } catch (err) {
      for (const c of cleanup.reverse()) await c();
      throw err;
    }
  }

  async close(): Promise<void> {
    process.off('exit', this.#exitSync);
    this.#thawWatchdog.close();
    this.#closed = true; // a spare being made now gets no launcher
    await this.#slots?.close();
    for (const w of this.#waiting.values()) w.launcher.cancel();
    await Promise.all([...this.#waiting.values()].map((w) => w.cgroup.remove()));
    this.#waiting.clear();
    await this.#fence?.close();
    if (this.#o.caps.cgroups) removeCgroupParents(this.#o.caps.cgroups);
  }

  /**
   * Starts a launcher in the cgroups of a spare slot (all but cpu, which only a cpu limit needs), so the
   * start that takes the slot does not wait for the join (waiting-launcher.ts). Without bash, none.
   */
  #launcherFor(plan: SlotPlan): void {
    const { cgroups, tools } = this.#o.caps;
    if (this.#closed || !cgroups || !tools.bash || !tools.env) return;
    const { cpu, ...layout } = cgroups;
    try {
      const cgroup = new InstanceCgroup(layout, plan.netns);
      const launcher = WaitingLauncher.spawn({ bash: tools.bash, env: tools.env }, cgroup.procsFiles);
      this.#waiting.set(plan.netns, { launcher, cgroup });
    } catch (err) {
      this.#o.log.warn(
        { err: (err as Error).message },
        'could not start a waiting launcher; the next start joins its cgroups itself',
      );
    }
  }

  /** The launcher made for `plan`'s slot and its cgroups (alive or not: the sandbox's launch checks). */
  #takeLauncher(plan: SlotPlan): { launcher: WaitingLauncher; cgroup: InstanceCgroup } | undefined {
    const w = this.#waiting.get(plan.netns);
    this.#waiting.delete(plan.netns);
    return w;
  }

  /**
   * Refuses a read-only path the instance's uid cannot use itself (with why and what to do), and gives
   * a stage under `root` (bound there by root before bubblewrap runs as that uid) to each whose host
   * parents it cannot enter: a checkout in root's 0700 home, the manifest's folder under a 0700 temp folder.
   */
  #stage(spec: InstanceSpec, readOnly: readonly string[], viewer: Viewer, root: string): Record<string, string> {
    const staged: Record<string, string> = {};
    for (const p of readOnly) {
      const why = unusable(p, viewer, statSync);
      if (why) {
        throw new Error(
          `instance ${spec.name} cannot be shown ${p}: ${why}; let others in (chmod o+x on a folder, o+r on a file) or run tether up as its owner (not root)`,
        );
      }
      if (blockedAbove(p, viewer, statSync) === undefined) continue;
      const { unshare, mount } = this.#o.caps.tools;
      if (!unshare || !mount) {
        throw new Error(
          `instance ${spec.name} cannot be shown ${p}: its uid cannot enter a parent folder, and unshare/mount (util-linux) are missing to stage it`,
        );
      }
      const stage = join(root, 'view', String(Object.keys(staged).length));
      mkdirSync(join(root, 'view'), { recursive: true, mode: 0o711 });
      if (statSync(p).isDirectory()) mkdirSync(stage, { mode: 0o711 });
      else writeFileSync(stage, '', { mode: 0o644 });
      staged[p] = stage;
    }
    return staged;
  }

  /** workingDir, the command's files and what the service asks for, where they exist. */
  #readOnly(spec: InstanceSpec): string[] {
    const wanted = [spec.workingDir, ...commandFiles(spec.argv, spec.workingDir, existsSync)];
    return [...wanted, ...(spec.sandbox?.readOnlyPaths ?? [])].filter((p) => existsSync(p));
  }
}
/** The system folders of this machine as they are (merged /usr symlinks kept as symlinks). */
function systemEntries(): SystemEntry[] {
  const out: SystemEntry[] = [];
  for (const path of SYSTEM_DIRS) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out.push({ path, link: readlinkSync(path) });
      else if (st.isDirectory()) out.push({ path });
    } catch {
      // not on this machine
    }
  }
  return out;
}

/** The DNAT route for the memory server at `url`, when it is an IPv4 or localhost address. */
function memoryRoute(url: string | undefined): { url: URL; route: MemoryRoute } | undefined {
  if (!url) return undefined;
  const u = new URL(url);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const host = u.hostname === 'localhost' ? '127.0.0.1' : u.hostname;
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(host)) return undefined;
  const targetIp = host === '0.0.0.0' ? '127.0.0.1' : host;
  return { url: u, route: { port, targetIp, targetPort: port } };
}

/** The URL an instance uses to reach `url` through its veth. */
function reachable(url: URL, plan: SlotPlan): string {
  const u = new URL(url.href);
  u.hostname = plan.hostIp;
  return u.href.replace(/\/$/, '');
}

/**
 * Creates the sandbox folder and writes its record (who owns it, which namespace), for the reaper.
 * 0711: bubblewrap runs as the instance's uid and must reach its work and token folders by path;
 * nobody can list the folder, and what is inside belongs to that uid alone.
 */
function writeRecord(root: string, record: SandboxRecord): void {
  mkdirSync(root, { recursive: true, mode: 0o711 });
  writeFileSync(join(root, 'owner.json'), JSON.stringify(record));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes sandboxes whose runtime died (network, cgroups, work folder); their processes go with the cgroup. */
async function reapSandboxes(o: NamespacesIsolationOptions, caps: HostCapabilities): Promise<void> {
  for (const id of readdirSync(o.dir)) {
    let rec: SandboxRecord;
    try {
      rec = JSON.parse(readFileSync(join(o.dir, id, 'owner.json'), 'utf8')) as SandboxRecord;
    } catch {
      continue;
    }
    if (isAlive(rec.owner)) continue;
    if (caps.cgroups) await new InstanceCgroup(caps.cgroups as CgroupLayout, id).remove();
    if (rec.netns && caps.tools.ip) await destroyNetwork(caps.tools.ip, rec.netns);
    rmSync(join(o.dir, id), { recursive: true, force: true });
    o.log.warn({ instance: rec.instance, owner: rec.owner }, 'removed the sandbox of a runtime that is gone');
  }
}
