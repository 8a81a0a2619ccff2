/**
 * examples/README.md's shell blocks run as a new user pastes them: every `$VAR` they use is set in that
 * block or an earlier one (no `$TOKEN` out of nowhere), and the CLI is `./bin/tether` or `npx tether`,
 * never a bare `tether` (which works only after `npm link`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

const TEXT = readFileSync(resolve(import.meta.dirname, '../../examples/README.md'), 'utf8');
const BLOCKS = [...TEXT.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

describe('examples/README.md', () => {
  it('has shell blocks to check', () => {
    assert.ok(BLOCKS.length >= 2, `${BLOCKS.length} blocks`);
  });

  it('sets every variable its shell blocks use before they use it', () => {
    const set = new Set<string>();
    const unset: string[] = [];
    for (const block of BLOCKS) {
      for (const line of block.split('\n')) {
        const code = line.replace(/\s#.*$/, '');
        for (const m of code.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)/g)) {
          if (!set.has(m[1] as string)) unset.push(`${m[1]} in: ${line.trim()}`);
        }
        for (const m of code.matchAll(/(?:^|\s|;)([A-Z_][A-Z0-9_]*)=/g)) set.add(m[1] as string);
      }
    }
    assert.deepEqual(unset, []);
  });

  it('runs the CLI as ./bin/tether or npx tether', () => {
    const bare = BLOCKS.flatMap((b) => b.split('\n')).filter((l) =>
      /(^|[\s;&|(])tether\s/.test(l.replace(/\s#.*$/, '')),
    );
    const wrong = bare.filter((l) => !/(\.\/bin\/tether|npx tether)\s/.test(l));
    assert.deepEqual(wrong, []);
  });
});
