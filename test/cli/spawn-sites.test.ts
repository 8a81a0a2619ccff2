/**
 * Every test and benchmark runs bin/tether through test/helpers/tether-cli.ts, which runs dist/ only when it was
 * built from the current src/ and src/ through tsx otherwise: a path to bin/tether written anywhere else would run
 * dist/, stale after any edit of src/.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const HELPER = 'test/helpers/tether-cli.ts';
const SELF = 'test/cli/spawn-sites.test.ts';
/** A string literal that is a path ending in bin/tether: '../../bin/tether', 'bin/tether', './bin/tether'. */
const BIN_PATH = /['"`][./]*bin\/tether['"`]/;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

describe('bin/tether spawn sites', () => {
  it('are all in the helper that runs src/ (never a stale dist/)', () => {
    const files = [...tsFiles(join(ROOT, 'test')), ...tsFiles(join(ROOT, 'bench'))];
    assert.ok(files.includes(HELPER));
    const elsewhere = files
      .filter((f) => f !== HELPER && f !== SELF)
      .flatMap((f) =>
        readFileSync(join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
          .filter(({ line }) => BIN_PATH.test(line) && !/^\s*(\/?\*|\/\/)/.test(line)),
      )
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    assert.deepEqual(elsewhere, []);
  });

  it('would be caught by the check', () => {
    assert.ok(BIN_PATH.test("const BIN = new URL('../../bin/tether', import.meta.url).pathname;"));
    assert.ok(BIN_PATH.test("spawn(process.execPath, [join(ROOT, 'bin/tether'), 'up'])"));
    assert.ok(!BIN_PATH.test("it('runs the CLI as ./bin/tether or npx tether', () => {"));
  });
});
