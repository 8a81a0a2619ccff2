/**
 * @module
 * Files only this user may read: folders 0700 and files 0600 whatever the umask and whether they
 * existed before (mkdir's and open's `mode` apply only to what they create, minus the umask). Used
 * for the memory data folder, its database files and every key or token file. Imports only node:fs.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';

/** Makes `dir` (and missing parents) and sets it to 0700. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Creates `path` empty if missing, and sets it to 0600 (before SQLite opens it: see `sqlite-store.ts`). */
export function ensurePrivateFile(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
}

/** Sets `path` to 0600 if it exists. */
export function restrictIfExists(path: string): void {
  if (existsSync(path)) chmodSync(path, 0o600);
}

/** Writes `text` to `path` with mode 0600 (also when the file existed with a wider mode). */
export function writePrivateFile(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}
