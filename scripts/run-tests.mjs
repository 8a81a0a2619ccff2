#!/usr/bin/env node
// `npm test`: every test/**/*.test.ts under node:test through tsx, CONCURRENCY files at a time, the files of
// test/slowest.txt first (longest first) and the rest in path order, so the long files overlap the many short
// ones instead of ending the run alone. Arguments are test files to run instead of all (same order rules).
// The exit code is node --test's. Plain JS: it needs no tsx itself.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Files at a time. 2, as the machine has 2 cores: the suite is CPU-bound (each file and each of its servers is a
 * process), and a run at 3 on a machine loaded by other work failed tests whose leases and deadlines lapsed.
 */
const CONCURRENCY = 2;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const all =
  process.argv.length > 2
    ? process.argv.slice(2)
    : readdirSync(join(root, 'test'), { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
        .map((e) => relative(root, join(e.parentPath, e.name)))
        .sort();
const slowest = readFileSync(join(root, 'test/slowest.txt'), 'utf8')
  .split('\n')
  .filter((l) => /^\d/.test(l))
  .map((l) => l.trim().split(/\s+/)[1]);
const first = slowest.filter((f) => all.includes(f));
const files = [...first, ...all.filter((f) => !first.includes(f))];

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${CONCURRENCY}`, ...files],
  { cwd: root, stdio: 'inherit' },
);
// A Ctrl-C reaches the whole process group; a SIGTERM to this process alone is passed on.
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
