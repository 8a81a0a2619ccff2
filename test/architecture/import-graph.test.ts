/**
 * The import graph of `src/` (issue 24): every relative `import … from`, `export … from`, side-effect and
 * dynamic `import('…')` specifier of every `src/**\/*.ts` file, type-only imports included, resolved to a path.
 * Rules: the runtime never imports the gateway (a runtime takes its own service spec); a store driver never
 * imports its sibling (what SQLite and PostgreSQL share lives in `store/` beside the port); `up/` never
 * imports `cli/` (the CLI picks drivers and hands them down, never the reverse).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ImportEdge, importGraph, importsOf } from './source-tree.ts';

/** A forbidden arrow between two folders of `src/`. */
interface Rule {
  name: string;
  forbids: (edge: ImportEdge) => boolean;
}

const under = (path: string, dir: string) => path.startsWith(`${dir}/`);

const RULES: readonly Rule[] = [
  {
    name: 'src/runtime/ imports nothing from src/gateway/',
    forbids: (e) => under(e.from, 'src/runtime') && under(e.to, 'src/gateway'),
  },
  {
    name: 'a store driver imports nothing from its sibling (src/store/postgres/ <-> src/store/sqlite/)',
    forbids: (e) =>
      (under(e.from, 'src/store/postgres') && under(e.to, 'src/store/sqlite')) ||
      (under(e.from, 'src/store/sqlite') && under(e.to, 'src/store/postgres')),
  },
  {
    name: 'src/up/ imports nothing from src/cli/',
    forbids: (e) => under(e.from, 'src/up') && under(e.to, 'src/cli'),
  },
];

const graph = importGraph();

/** The edges a rule forbids, one line each. */
function broken(rule: Rule, edges: readonly ImportEdge[]): string[] {
  return edges.filter(rule.forbids).map((e) => `${e.from} -> ${e.to} ('${e.specifier}')`);
}

describe('the import graph of src/', () => {
  it('is read whole: static, re-export, type-only and dynamic imports are all seen', () => {
    assert.ok(graph.length > 500, `only ${graph.length} imports found`);
    const has = (from: string, to: string) => graph.some((e) => e.from === from && e.to === to);
    assert.ok(has('src/cli/commands.ts', 'src/cli/memory-command.ts'), "dynamic import('./memory-command.ts')");
    assert.ok(has('src/up/platform.ts', 'src/runtime/runtime.ts'), 'import type { InstanceRuntime }');
    assert.ok(has('src/cli/drivers.ts', 'src/store/sqlite/sqlite-store.ts'), 'import { openSqliteStore }');
  });

  it('each rule catches the import it forbids', () => {
    const sample = (from: string, to: string, text: string) =>
      importsOf(from, text).filter((e) => e.to === to && RULES.some((r) => r.forbids(e)));
    // One made-up file per rule and kind of import: each must be reported.
    const cases: [string, string, string][] = [
      [
        'src/runtime/kubernetes/x.ts',
        'src/gateway/services/service-config.ts',
        "import type { S } from '../../gateway/services/service-config.ts';",
      ],
      ['src/store/postgres/x.ts', 'src/store/sqlite/rows.ts', "export { rowToEvent } from '../sqlite/rows.ts';"],
      [
        'src/store/sqlite/x.ts',
        'src/store/postgres/connection.ts',
        "const c = await import('../postgres/connection.ts');",
      ],
      ['src/up/x.ts', 'src/cli/drivers.ts', "import { localPlatformDrivers } from '../cli/drivers.ts';"],
    ];
    for (const [from, to, text] of cases) assert.equal(sample(from, to, text).length, 1, text);
  });

  for (const rule of RULES) {
    it(rule.name, () => {
      assert.deepEqual(broken(rule, graph), [], `${rule.name}: forbidden imports`);
    });
  }
});
