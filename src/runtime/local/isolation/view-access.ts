/**
 * @module
 * Which host paths an instance's uid can reach, for its filesystem view: bubblewrap runs as that uid
 * and resolves every bind source and mask target with its rights. A folder the view shows whose host
 * parents that uid cannot enter (a checkout under root's 0700 home) is bind-mounted by root to a
 * stage folder it can reach first; a folder it cannot read itself is refused with the reason; a
 * hidden path it cannot reach needs no mask. Pure over an injected `stat`; namespaces-isolation.ts calls it.
 */
import { dirname } from 'node:path';
import { isInside } from './filesystem-view.ts';

/** Whose rights count: the instance's uid and groups (uid 0 reaches everything). */
export interface Viewer {
  uid: number;
  gids: readonly number[];
}

/** The fields of a stat the checks need. */
export interface PathStat {
  mode: number;
  uid: number;
  gid: number;
  isDirectory(): boolean;
}

/** How to stat a host path (throws when it does not exist). */
export type StatFn = (path: string) => PathStat;

/** True when `v` has permission `bit` (4 read, 1 search/execute) on the file stat'ed as `st`. */
export function allows(st: PathStat, v: Viewer, bit: 4 | 1): boolean {
  if (v.uid === 0) return true;
  if (st.uid === v.uid) return (st.mode & (bit << 6)) !== 0;
  if (v.gids.includes(st.gid)) return (st.mode & (bit << 3)) !== 0;
  return (st.mode & bit) !== 0;
}

/** The nearest folder above `path` that `v` cannot enter (so cannot resolve `path` through), if any. */
export function blockedAbove(path: string, v: Viewer, stat: StatFn, below = '/'): string | undefined {
  const above: string[] = [];
  let d = dirname(path);
  while (d !== path && isInside(d, below)) {
    above.unshift(d);
    if (d === below || d === '/') break;
    d = dirname(d);
  }
  return above.find((a) => !allows(stat(a), v, 1));
}

/** Why `v` cannot use `path` itself (a folder it cannot enter, a file it cannot read), or undefined. */
export function unusable(path: string, v: Viewer, stat: StatFn): string | undefined {
  const st = stat(path);
  const dir = st.isDirectory();
  if (allows(st, v, dir ? 1 : 4)) return undefined;
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  return `uid ${v.uid} cannot ${dir ? 'enter' : 'read'} ${path} (mode ${mode}, owner uid ${st.uid})`;
}

/** The paths not inside another one of them (a nested path shows through its parent's bind). */
export function outermost(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  return unique.filter((p) => !unique.some((q) => q !== p && isInside(p, q)));
}

/** True when `v` can reach `path` from `root` (every folder from `root`, included, down to its parent lets it in). */
export function reachableWithin(path: string, root: string, v: Viewer, stat: StatFn): boolean {
  return blockedAbove(path, v, stat, root) === undefined;
}
