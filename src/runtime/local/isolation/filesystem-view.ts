/**
 * @module
 * An instance's view of the filesystem, as bubblewrap arguments: the system folders read-only, a
 * fresh /proc (its own PID namespace: no host process shows), a minimal /dev, a private /tmp, the
 * service's workingDir and the files its command names read-only, a private writable work folder at
 * WORK_DIR and its token folder read-only at TOKEN_DIR, then masks over what must stay hidden even
 * inside a visible folder (data folder, admin key, authority, other instances). A read-only folder
 * may be bound from a stage (view-access.ts says when). Pure.
 */
import { isAbsolute, resolve } from 'node:path';

/** Where the instance sees its private writable folder (also its HOME). */
export const WORK_DIR = '/workspace';
/** Where the instance sees its token folder; `TETHER_TOKEN_FILE` points inside. */
export const TOKEN_DIR = '/var/run/secrets/tether';

/** A system folder shown read-only, or a symlink recreated (merged /usr: `/bin -> usr/bin`). */
export interface SystemEntry {
  path: string;
  /** Set for a symlink: its target. */
  link?: string;
}

/** Something to hide inside the view. */
export interface Mask {
  path: string;
  kind: 'dir' | 'file';
}

/** Everything the view is made of. */
export interface ViewSpec {
  hostname: string;
  system: readonly SystemEntry[];
  /** Absolute host paths shown read-only at the same place. */
  readOnly: readonly string[];
  /** For a `readOnly` path whose host parents the instance's uid cannot enter: the stage it is bound from. */
  staged?: Readonly<Record<string, string>>;
  masks: readonly Mask[];
  /** Host path of the private work folder (bubblewrap runs as the instance's uid: it must reach it). */
  workDir: string;
  /** Host path of the instance's token folder, when it has one. */
  tokenDir?: string;
  workingDir: string;
  /** Unshare the network too (when the runtime does not provide a namespace of its own). */
  unshareNet: boolean;
}

/** The bwrap arguments before `--` and the command. */
export function bwrapArgs(v: ViewSpec): string[] {
  const a = ['--unshare-user', '--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try'];
  if (v.unshareNet) a.push('--unshare-net');
  a.push('--hostname', v.hostname, '--die-with-parent');
  for (const s of v.system) {
    if (s.link !== undefined) a.push('--symlink', s.link, s.path);
    else a.push('--ro-bind', s.path, s.path);
  }
  a.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  // Parents before children, so a nested path is mounted on top of its parent's view.
  for (const p of [...new Set(v.readOnly)].sort((x, y) => x.length - y.length)) {
    a.push('--ro-bind', v.staged?.[p] ?? p, p);
  }
  a.push('--bind', v.workDir, WORK_DIR);
  if (v.tokenDir !== undefined) a.push('--ro-bind', v.tokenDir, TOKEN_DIR);
  for (const m of v.masks) {
    if (m.kind === 'dir') a.push('--tmpfs', m.path, '--remount-ro', m.path);
    else a.push('--ro-bind', '/dev/null', m.path);
  }
  a.push('--chdir', v.workingDir);
  return a;
}

/**
 * The files a command names that exist on the host: the executable when given as a path, and each
 * argument that is a path (absolute, or relative to `workingDir`) to an existing file.
 * @param exists how to check a path (fs.existsSync in use)
 */
export function commandFiles(argv: readonly string[], workingDir: string, exists: (p: string) => boolean): string[] {
  const out: string[] = [];
  argv.forEach((arg, i) => {
    if (arg.startsWith('-') || arg.includes('=') || arg.length === 0) return;
    const looksLikePath = isAbsolute(arg) || arg.includes('/') || (i > 0 && /\.[a-z0-9]+$/i.test(arg));
    if (!looksLikePath) return;
    const p = resolve(workingDir, arg);
    if (exists(p)) out.push(p);
  });
  return out;
}

/** True when `path` is `dir` or inside it. */
export function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}
