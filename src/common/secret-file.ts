/**
 * @module
 * Per-deployment secrets kept in files: read one, or generate it on first use (256 random bits as hex)
 * with mode 0600 in a 0700 folder, whatever the umask. The gateway's claim secret, session-signing secret
 * and `tether up`'s admin token live this way. The secret itself is never logged or put in an error.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The shortest secret accepted from a file or the environment (characters). */
export const MIN_SECRET_LENGTH = 32;

/** A secret and where it came from. */
export interface LoadedSecret {
  /** The secret text (at least `MIN_SECRET_LENGTH` characters). */
  value: string;
  /** True when this call generated it (the file was new). */
  created: boolean;
}

/**
 * Reads the secret in `file`, or generates one there (64 hex characters, mode 0600; its folder is made 0700).
 * Two processes starting at once agree: the file is created exclusively, and the loser reads the winner's.
 * @throws {Error} naming the file when it holds fewer than 32 characters (never the content)
 */
export function loadOrCreateSecret(file: string): LoadedSecret {
  const existing = readSecret(file);
  if (existing !== undefined) return { value: existing, created: false };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    chmodSync(dirname(file), 0o700); // it may have existed, or the umask took bits off
  } catch {
    // not ours to change (a folder the operator chose): the file itself is still 0600
  }
  const value = randomBytes(32).toString('hex');
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const raced = readSecret(file);
    if (raced !== undefined) return { value: raced, created: false };
    throw err;
  }
  chmodSync(file, 0o600); // the umask may have taken bits off; never more than 0600 either way
  return { value, created: true };
}

/**
 * A secret given as text (a flag or environment variable), checked for length.
 * @param what names the source in the error, e.g. `TETHER_CLAIM_SECRET`
 * @throws {Error} when shorter than 32 characters
 */
export function checkSecret(text: string, what: string): string {
  const value = text.trim();
  if (value.length < MIN_SECRET_LENGTH) {
    throw new Error(`${what} must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`);
  }
  return value;
}

function readSecret(file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const value = checkSecret(text, file);
  // A file other users may read is tightened rather than trusted as is.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return value;
}
