/**
 * Store drivers import only their port and `common/` (issue 24): every relative import of a file
 * under `src/store/sqlite/` or `src/store/postgres/` stays in its own folder, or names a file of
 * `src/store/` itself (the ports and what the drivers share) or of `src/common/` — never the sibling driver.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const STORE = join(SRC, 'store');

/** Relative module specifiers of `from '…'`, `import '…'` and `import('…')` in TypeScript `text`. */
function relativeImports(text: string): string[] {
  const found = text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g);
  return [...found].map((m) => m[1] as string);
}

/** Every `.ts` file under `dir`. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

describe('store driver imports', () => {
  for (const driver of ['sqlite', 'postgres']) {
    it(`${driver}/ imports only its own files, src/store/*.ts and src/common/`, () => {
      const own = join(STORE, driver);
      const files = tsFiles(own);
      assert.ok(files.length > 5, `found the ${driver} driver's files`);
      const outside: string[] = [];
      for (const file of files) {
        for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
          const target = resolve(dirname(file), spec);
          const allowed =
            target.startsWith(`${own}/`) || dirname(target) === STORE || target.startsWith(`${join(SRC, 'common')}/`);
          if (!allowed) outside.push(`${relative(SRC, file)} -> ${spec}`);
        }
      }
      assert.deepEqual(outside, []);
    });
  }
});
