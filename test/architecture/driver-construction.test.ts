/**
 * Drivers are built only by the CLI's driver table (issue 24): outside `src/cli/`, no file of `src/` writes
 * `new SqliteStore|PostgresStore|LocalRuntime|KubernetesRuntime|RedisSessionStore|MemorySessionStore` (an
 * import alias counts as the class). One exception, and what keeps it honest: a store driver builds itself
 * inside its own factory in the file that defines it (`openSqliteStore` in sqlite-store.ts, `openPostgresStore`
 * in postgres-store.ts, which open and migrate before `new`), and those factories are called (or imported) from
 * nowhere in `src/` but `src/cli/`. Read from the syntax tree, so comments and strings do not count.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-tree.ts';

const DRIVER_CLASSES = [
  'SqliteStore',
  'PostgresStore',
  'LocalRuntime',
  'KubernetesRuntime',
  'RedisSessionStore',
  'MemorySessionStore',
] as const;

/** The factories a driver class may be built in: the file that defines both, and the function's name. */
const OWN_FACTORIES: Readonly<Record<string, { file: string; factory: string }>> = {
  SqliteStore: { file: 'src/store/sqlite/sqlite-store.ts', factory: 'openSqliteStore' },
  PostgresStore: { file: 'src/store/postgres/postgres-store.ts', factory: 'openPostgresStore' },
};

/** A `new` of a driver class, or a use of a factory's name. */
interface Site {
  file: string;
  line: number;
  name: string;
  /** The function declaration the site is in, if any. */
  inFunction?: string;
  /** The site is the factory's own declaration name. */
  declaration?: boolean;
}

/** The `new <driver>` sites and the uses of factory names in one file. */
function scan(file: string, text: string): { constructions: Site[]; factoryUses: Site[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  // Local name -> imported name, so `import { LocalRuntime as Runner }` + `new Runner()` is still caught.
  const aliases = new Map<string, string>();
  const constructions: Site[] = [];
  const factoryUses: Site[] = [];
  const factories = new Set(Object.values(OWN_FACTORIES).map((f) => f.factory));
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const enclosing = (node: ts.Node) => {
    for (let p = node.parent; p; p = p.parent) if (ts.isFunctionDeclaration(p)) return p.name?.text;
    return undefined;
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportSpecifier(node)) aliases.set(node.name.text, (node.propertyName ?? node.name).text);
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression)) {
      const name = aliases.get(node.expression.text) ?? node.expression.text;
      if ((DRIVER_CLASSES as readonly string[]).includes(name)) {
        constructions.push({ file, line: lineOf(node), name, inFunction: enclosing(node) });
      }
    }
    if (ts.isIdentifier(node) && factories.has(node.text)) {
      const declaration = ts.isFunctionDeclaration(node.parent) && node.parent.name === node;
      factoryUses.push({ file, line: lineOf(node), name: node.text, declaration });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { constructions, factoryUses };
}

/** What the rules refuse in these scanned files, one line each. */
function violations(files: readonly { file: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { file, text } of files) {
    if (file.startsWith('src/cli/')) continue;
    const { constructions, factoryUses } = scan(file, text);
    for (const c of constructions) {
      const own = OWN_FACTORIES[c.name];
      if (own && own.file === file && own.factory === c.inFunction) continue;
      out.push(`${file}:${c.line}: new ${c.name} outside src/cli/`);
    }
    for (const u of factoryUses) {
      const own = Object.values(OWN_FACTORIES).find((f) => f.factory === u.name);
      if (u.declaration && own?.file === file) continue;
      out.push(`${file}:${u.line}: ${u.name} used outside src/cli/`);
    }
  }
  return out;
}

const tree = sourceFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

describe('drivers are built only in src/cli/', () => {
  it('no file outside src/cli/ builds a driver or calls a driver factory', () => {
    assert.deepEqual(violations(tree), []);
  });

  it('sees the drivers the CLI builds (the scan is not blind)', () => {
    const built = tree
      .filter((f) => f.file.startsWith('src/cli/'))
      .flatMap((f) => scan(f.file, f.text).constructions.map((c) => c.name));
    for (const name of ['LocalRuntime', 'KubernetesRuntime', 'RedisSessionStore', 'MemorySessionStore'])
      assert.ok(built.includes(name), `src/cli/ builds ${name}`);
    const own = tree.flatMap((f) => scan(f.file, f.text).constructions.filter((c) => OWN_FACTORIES[c.name]));
    assert.deepEqual(
      own.map((c) => [c.file, c.name, c.inFunction]),
      [
        ['src/store/postgres/postgres-store.ts', 'PostgresStore', 'openPostgresStore'],
        ['src/store/sqlite/sqlite-store.ts', 'SqliteStore', 'openSqliteStore'],
      ],
    );
  });

  it('refuses a construction, an aliased one, one outside its factory, and a factory called elsewhere', () => {
    const found = violations([
      { file: 'src/gateway/x.ts', text: 'const r = new LocalRuntime({ log });' },
      { file: 'src/up/x.ts', text: "import { MemorySessionStore as M } from '../sessions/memory-store.ts';\nnew M();" },
      { file: 'src/store/sqlite/sqlite-store.ts', text: 'export function other() { return new SqliteStore({}); }' },
      { file: 'src/server/x.ts', text: "import { openSqliteStore } from '../store/sqlite/sqlite-store.ts';" },
      { file: 'src/server/y.ts', text: '// new SqliteStore() in a comment\nconst s = "new PostgresStore";' },
    ]);
    assert.deepEqual(found, [
      'src/gateway/x.ts:1: new LocalRuntime outside src/cli/',
      'src/up/x.ts:2: new MemorySessionStore outside src/cli/',
      'src/store/sqlite/sqlite-store.ts:1: new SqliteStore outside src/cli/',
      'src/server/x.ts:1: openSqliteStore used outside src/cli/',
    ]);
  });
});
