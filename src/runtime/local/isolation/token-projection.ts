/**
 * @module
 * Keeps a copy of an instance's token file in its sandbox folder, owned by the instance's uid, the way
 * the kubelet projects a service-account token: copied at start and again whenever the source is
 * rewritten (rotation renames a new file into place; an inotify watch on its folder sees it). The
 * source's folder stays private to the runtime. Used by namespaces-isolation.ts.
 */
import { chmodSync, chownSync, copyFileSync, type FSWatcher, mkdirSync, renameSync, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A live projection; `close()` stops following the source. */
export interface TokenProjection {
  /** The folder holding the copy (bind-mounted read-only into the sandbox). */
  dir: string;
  close(): void;
}

/**
 * Projects `source` into `<dir>/<basename>`.
 * @param uid owner of the copy (undefined: keep the runtime's own)
 * @param onError told when a copy fails (the previous copy stays in place)
 */
export function projectToken(
  source: string,
  dir: string,
  uid: number | undefined,
  onError: (err: Error) => void,
): TokenProjection {
  mkdirSync(dir, { recursive: true, mode: 0o500 });
  if (uid !== undefined) chownSync(dir, uid, uid);
  const name = basename(source);
  const copy = () => {
    const tmp = join(dir, `.${name}.tmp`);
    copyFileSync(source, tmp);
    chmodSync(tmp, 0o400);
    if (uid !== undefined) chownSync(tmp, uid, uid);
    renameSync(tmp, join(dir, name));
  };
  copy();
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(source), (_event, file) => {
      if (file !== name) return;
      try {
        copy();
      } catch (err) {
        onError(err as Error);
      }
    });
    watcher.on('error', () => watcher?.close());
  } catch (err) {
    onError(err as Error);
  }
  return { dir, close: () => watcher?.close() };
}
