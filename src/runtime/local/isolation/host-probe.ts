/**
 * @module
 * What this machine allows for isolating local instances: the tools (bubblewrap, nsenter, setpriv,
 * iproute2, nftables), root, unprivileged user namespaces, and the cgroup layout (cgroups.ts). Reads
 * the machine only (PATH, /proc, one `bwrap` trial run); choose-isolation.ts decides from it.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { type CgroupLayout, detectCgroups } from './cgroups.ts';

const run = promisify(execFile);

/** Absolute paths of the tools, when found. */
export interface IsolationTools {
  bwrap?: string;
  nsenter?: string;
  setpriv?: string;
  ip?: string;
  nft?: string;
  sh?: string;
  /** bash and env: a launcher waiting inside an instance's cgroups before it is asked for (waiting-launcher.ts). */
  bash?: string;
  env?: string;
  /** unshare and mount (util-linux): stage a folder whose host parents an instance's uid cannot enter. */
  unshare?: string;
  mount?: string;
}

/** What the probe found. */
export interface HostCapabilities {
  tools: IsolationTools;
  /** Effective uid 0 (network, cgroups and a dedicated uid per instance need it). */
  root: boolean;
  /** `bwrap --unshare-user` ran a command (as this user). */
  userNamespaces: boolean;
  /** Usable cgroup controllers; undefined when none can be written. */
  cgroups: CgroupLayout | undefined;
  /** `net.ipv4.ip_forward` is on (public egress of instances needs it; we never turn it on). */
  forwarding: boolean;
}

/** Finds `name` on PATH (or the sbin folders, where iproute2 and nftables live). */
export function findTool(name: string, path = process.env.PATH ?? ''): string | undefined {
  const dirs = [...path.split(delimiter), '/usr/sbin', '/sbin', '/usr/bin', '/bin'].filter(Boolean);
  for (const d of dirs) {
    const candidate = join(d, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Probes the machine (about 15 ms: one bwrap and one bash trial). */
export async function probeHost(): Promise<HostCapabilities> {
  const tools: IsolationTools = {
    bwrap: findTool('bwrap'),
    nsenter: findTool('nsenter'),
    setpriv: findTool('setpriv'),
    ip: findTool('ip'),
    nft: findTool('nft'),
    sh: findTool('sh'),
    bash: findTool('bash'),
    env: findTool('env'),
    unshare: findTool('unshare'),
    mount: findTool('mount'),
  };
  // The waiting launcher reads NUL-separated words with `mapfile -d ''` (bash 4.4 and later).
  if (tools.bash) {
    try {
      await run(tools.bash, ['-c', "mapfile -d '' -t a </dev/null"], { timeout: 5000, env: {} });
    } catch {
      tools.bash = undefined;
    }
  }
  const root = process.geteuid?.() === 0;
  let userNamespaces = false;
  if (tools.bwrap) {
    try {
      await run(tools.bwrap, ['--unshare-user', '--ro-bind', '/', '/', '--', 'true'], { timeout: 5000 });
      userNamespaces = true;
    } catch {
      userNamespaces = false;
    }
  }
  let forwarding = false;
  try {
    forwarding = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim() === '1';
  } catch {
    forwarding = false;
  }
  return { tools, root, userNamespaces, cgroups: root ? detectCgroups() : undefined, forwarding };
}
