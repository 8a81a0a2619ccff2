// The fingerprint of what `scripts/build.mjs` compiles: every file under src/ (path and bytes) and the two
// tsconfig files. The build writes it to dist/.source-hash; test/helpers/tether-cli.ts runs the compiled CLI only
// when dist/ holds the fingerprint of the current src/ (a compiled CLI starts in a fraction of tsx's CPU), and
// src/ through tsx otherwise, so a test never runs a dist/ left stale by an edit. Plain JS: the build needs no tsx.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Where the build records the fingerprint it compiled from. */
export const SOURCE_HASH_FILE = '.source-hash';

/** sha256 over src/ and tsconfig*.json of the checkout at `root`, in a fixed order. */
export function sourceHash(root) {
  const src = join(root, 'src');
  const files = readdirSync(src, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .concat(['tsconfig.json', 'tsconfig.build.json'])
    .sort();
  const hash = createHash('sha256');
  for (const f of files) hash.update(`${f}\0`).update(readFileSync(join(root, f))).update('\0');
  return hash.digest('hex');
}
