/**
 * @module
 * `--isolation auto|namespaces|none`: decides from what the machine allows (host-probe.ts) which
 * isolation is in force, says so once at start (and what is lost when a tool or a right is missing),
 * and builds it. `auto` falls back to plain processes with one warning; `namespaces` refuses to start
 * without bubblewrap and user namespaces. Called by the CLI (the only place drivers are chosen).
 */
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../common/log.ts';
import { type HostCapabilities, probeHost } from './host-probe.ts';
import { NamespacesIsolation } from './namespaces-isolation.ts';
import type { Isolation } from './sandbox.ts';

/** The default sandbox folder: one per OS user under the temp folder (like the runtime's state folder). */
export function defaultSandboxDir(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = String(process.getuid?.() ?? 'user');
  }
  return join(tmpdir(), `tether-sandboxes-${user}`);
}

/** Parses `--isolation`. @throws {Error} naming the flag and the accepted values */
export function parseIsolationMode(text: string, flag = '--isolation'): IsolationMode {
  if ((ISOLATION_MODES as readonly string[]).includes(text)) return text as IsolationMode;
  throw new Error(`${flag} must be one of ${ISOLATION_MODES.join(', ')}: got '${text}'`);
}

/** What `--isolation` accepts. */
export type IsolationMode = 'auto' | 'namespaces' | 'none';
export const ISOLATION_MODES: readonly IsolationMode[] = Object.freeze(['auto', 'namespaces', 'none']);

/** The decision, for the log line. */
export interface IsolationDecision {
  mode: 'namespaces' | 'none';
  /** Why, in words. */
  reason: string;
  /** Parts of the isolation this machine cannot give (empty when all of it is in force). */
  lost: string[];
  network: boolean;
  ownUid: boolean;
}

/**
 * Decides. Pure.
 * @param why how the mode was chosen, for the reason text (e.g. "the default of tether up")
 * @throws {Error} for `namespaces` when bubblewrap or user namespaces are missing
 */
export function decideIsolation(requested: IsolationMode, caps: HostCapabilities, why: string): IsolationDecision {
  if (requested === 'none') {
    return { mode: 'none', reason: `--isolation none (${why})`, lost: [], network: false, ownUid: false };
  }
  const missing = !caps.tools.bwrap
    ? 'bubblewrap (bwrap) is not installed'
    : !caps.userNamespaces
      ? 'this machine allows no user namespaces (not root, and unprivileged ones are off)'
      : !caps.tools.sh
        ? 'no /bin/sh'
        : undefined;
  if (missing) {
    if (requested === 'namespaces') throw new Error(`--isolation namespaces is impossible here: ${missing}`);
    return {
      mode: 'none',
      reason: `--isolation auto (${why}), but ${missing}`,
      lost: ['all'],
      network: false,
      ownUid: false,
    };
  }
  const lost: string[] = [];
  const t = caps.tools;
  const network = caps.root && !!t.ip && !!t.nft && !!t.nsenter;
  if (!network) {
    lost.push(
      caps.root
        ? `network namespace and fence (missing: ${['ip', 'nft', 'nsenter'].filter((k) => !t[k as keyof typeof t]).join(', ')})`
        : 'network namespace and fence (needs root): instances share the host network',
    );
  }
  const ownUid = network && !!t.setpriv;
  if (!ownUid)
    lost.push(caps.root && network ? 'own uid (setpriv missing)' : 'own uid (needs root and a network namespace)');
  const cg = caps.cgroups;
  if (!cg?.freezer) lost.push('cgroup freezer (pause falls back to SIGSTOP)');
  if (!cg?.memory) lost.push('memory limit');
  if (!cg?.cpu) lost.push('cpu limit');
  if (!cg?.pids) lost.push('pids limit');
  return { mode: 'namespaces', reason: `--isolation ${requested} (${why})`, lost, network, ownUid };
}

/** Options of `createIsolation`. */
export interface CreateIsolationOptions {
  requested: IsolationMode;
  /** How the mode was chosen, for the log line. */
  why: string;
  memoryUrl?: string;
  hidden: readonly string[];
  /** Where sandboxes keep their work folders and records. */
  dir: string;
  log: Logger;
  /** Probe result (tests); probed when absent. */
  caps?: HostCapabilities;
}

/** Probes, decides, logs the decision once and builds the isolation (undefined = plain processes). */
export async function createIsolation(o: CreateIsolationOptions): Promise<Isolation | undefined> {
  const caps = o.caps ?? (await probeHost());
  const d = decideIsolation(o.requested, caps, o.why);
  if (d.mode === 'none') {
    if (o.requested === 'auto') {
      o.log.warn(
        { isolation: 'none', reason: d.reason },
        'isolation: none — instances run as plain processes of this user and can read what it can (the data ' +
          "folder, admin key, authority files, other instances' tokens) and reach every local port (docs/security.md)",
      );
    } else {
      o.log.info({ isolation: 'none', reason: d.reason }, 'isolation: none — instances run as plain processes');
    }
    return undefined;
  }
  const line = d.lost.length === 0 ? 'isolation: namespaces' : `isolation: namespaces, without: ${d.lost.join('; ')}`;
  (d.lost.length === 0 ? o.log.info : o.log.warn).call(
    o.log,
    { isolation: 'namespaces', reason: d.reason, lost: d.lost },
    line,
  );
  return NamespacesIsolation.create({
    caps,
    network: d.network,
    ownUid: d.ownUid,
    memoryUrl: o.memoryUrl,
    hidden: o.hidden,
    dir: o.dir,
    log: o.log,
  });
}
