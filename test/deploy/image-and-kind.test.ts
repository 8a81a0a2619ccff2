/**
 * The deploy kit outside the chart: the Dockerfile is multi-stage, installs no dev dependencies, runs as a
 * non-root user with `tether` as its entrypoint, and .dockerignore keeps tests and node_modules out; the kind
 * script (which cannot run here: no Docker engine) passes `bash -n` and shellcheck and runs the five checks.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/server/node-flags.ts';

const ROOT = join(import.meta.dirname, '../..');
const SCRIPT = join(ROOT, 'deploy/kind/run-kind.sh');

describe('Dockerfile', () => {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const stages = lines.filter((l) => /^FROM /i.test(l));

  it('builds in two stages, the last one from a clean base with the first stage only copied in', () => {
    assert.equal(stages.length, 2);
    assert.match(stages[0]!, / AS deps$/);
    assert.ok(lines.some((l) => /^COPY --from=deps /.test(l)));
  });

  it('installs production dependencies only, runs as a non-root user, and has tether as its entrypoint', () => {
    assert.ok(lines.some((l) => /npm ci --omit=dev/.test(l)));
    const last = lines.slice(lines.indexOf(stages[1]!));
    const user = last.find((l) => /^USER /.test(l));
    assert.ok(user && !/^USER (root|0)\b/.test(user), `USER: ${user}`);
    assert.deepEqual(JSON.parse(last.find((l) => /^ENTRYPOINT /.test(l))!.slice('ENTRYPOINT '.length)), [
      'node',
      ...SERVER_NODE_FLAGS,
      '/app/bin/tether',
    ]);
    // tsx runs the TypeScript sources at run time, so it must be a production dependency.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.ok(pkg.dependencies.tsx);
  });

  it('keeps node_modules, .git, tests and local data out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', '.git', 'test', '.tether', 'data']) assert.ok(ignored.includes(p), p);
  });
});

describe('deploy/kind/run-kind.sh', () => {
  it('passes bash -n and shellcheck', () => {
    execFileSync('bash', ['-n', SCRIPT]);
    execFileSync('shellcheck', [SCRIPT], { stdio: 'pipe' });
  });

  it('runs the five checks, each failing with a FAIL: line', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    for (let n = 1; n <= 5; n++) assert.match(text, new RegExp(`say "check ${n}: `));
    assert.match(text, /printf 'FAIL: %s\\n'/);
    assert.match(text, /set -euo pipefail/);
  });
});
