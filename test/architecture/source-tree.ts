/**
 * @module
 * The source tree as the architecture tests read it: every `src/**\/*.ts` file (repository-relative, `/`
 * separators) and the relative imports it makes — `import … from`,
 * `export … from`, side-effect `import '…'` and dynamic `import('…')`, type-only ones included — resolved to
 * repository paths. Package and `node:` imports are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** One import: `from` imports `to` (both repository paths, e.g. `src/up/platform.ts`). */
export interface ImportEdge {
  from: string;
  to: string;
  /** The specifier as written. */
  specifier: string;
}

/** Every `.ts` file under `dir` (repository-relative, default `src`), sorted. */
export function sourceFiles(dir = 'src'): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const path = join(abs, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) out.push(repoPath(path));
    }
  };
  walk(join(ROOT, dir));
  return out.sort();
}

function repoPath(abs: string): string {
  return relative(ROOT, abs).split(sep).join(posix.sep);
}

/** The relative imports of the file at repository path `file`, resolved. */
export function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): ImportEdge[] {
  // preProcessFile is TypeScript's own import scanner: static, re-export, side-effect and (with the
  // second flag) dynamic import('…') specifiers, with comments and strings handled as the compiler does.
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('./') || s.startsWith('../'))
    .map((specifier) => ({ from: file, to: repoPath(resolve(dirname(join(ROOT, file)), specifier)), specifier }));
}

/** The import graph of `src/`. */
export function importGraph(): ImportEdge[] {
  return sourceFiles().flatMap((f) => importsOf(f));
}
