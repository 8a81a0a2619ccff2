/**
 * The deploy kit outside the chart: the Dockerfile compiles in one stage and ships only dist/ (no sources, no
 * tsx), installs no dev dependencies in the image, runs as a non-root user with `tether` as its entrypoint, and
 * .dockerignore keeps tests and node_modules out; the kind script (which cannot run here: no Docker engine) passes
 * `bash -n` and shellcheck and runs the five checks, in claimed sandboxes and again through the gateway, whose
 * kind-agent manifest the gateway's own parser takes.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseManifestText } from '../../src/gateway/services/load-services.ts';
import { SERVER_NODE_FLAGS } from '../../src/server/node-flags.ts';
import { TETHER_BIN } from '../helpers/tether-cli.ts';

const ROOT = join(import.meta.dirname, '../..');
const KIND = join(ROOT, 'deploy/kind');
const SCRIPT = join(KIND, 'run-kind.sh');
const GATEWAY_CHECKS = join(KIND, 'gateway-checks.sh');

describe('Dockerfile', () => {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.trim().startsWith('#'));
  const stages = lines.filter((l) => /^FROM /i.test(l));

  it('builds in three stages: compile, production dependencies, and a clean base with both copied in', () => {
    assert.equal(stages.length, 3);
    assert.match(stages[0]!, / AS build$/);
    assert.match(stages[1]!, / AS deps$/);
    assert.ok(lines.some((l) => /^RUN npm run build$/.test(l)));
    assert.ok(lines.some((l) => /^COPY --from=deps \/app\/node_modules /.test(l)));
    assert.ok(lines.some((l) => /^COPY --from=build \/app\/dist /.test(l)));
  });

  it('installs production dependencies only, runs as a non-root user, and has tether as its entrypoint', () => {
    assert.ok(lines.some((l) => /npm ci --omit=dev/.test(l)));
    const last = lines.slice(lines.indexOf(stages[2]!));
    const user = last.find((l) => /^USER /.test(l));
    assert.ok(user && !/^USER (root|0)\b/.test(user), `USER: ${user}`);
    assert.deepEqual(JSON.parse(last.find((l) => /^ENTRYPOINT /.test(l))!.slice('ENTRYPOINT '.length)), [
      'node',
      ...SERVER_NODE_FLAGS,
      '/app/bin/tether',
    ]);
  });

  it('runs the compiled build: no TypeScript sources in the image, tsx only a dev dependency', () => {
    const last = lines.slice(lines.indexOf(stages[2]!));
    assert.deepEqual(
      last.filter((l) => /^COPY /.test(l) && /\bsrc\b/.test(l)),
      [],
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.equal(pkg.dependencies.tsx, undefined);
    assert.ok(pkg.devDependencies.tsx);
    // What the image's bin/tether imports is what the build stage makes.
    assert.match(readFileSync(TETHER_BIN, 'utf8'), /import\('\.\.\/dist\/cli\/main\.js'\)/);
  });

  it('keeps node_modules, .git, tests and local data out of the build context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', '.git', 'test', '.tether', 'data']) assert.ok(ignored.includes(p), p);
  });
});

describe('deploy/kind/run-kind.sh', () => {
  it('passes bash -n and shellcheck, with the gateway path it sources', () => {
    for (const file of [SCRIPT, GATEWAY_CHECKS, join(KIND, 'kind-agent-manifest.sh')]) {
      execFileSync('bash', ['-n', file]);
      // -x follows `source`: run-kind.sh is checked with the gateway path it reads.
      execFileSync('shellcheck', ['-x', file], { stdio: 'pipe', cwd: ROOT });
    }
    assert.match(readFileSync(SCRIPT, 'utf8'), /^\. "\$ROOT\/deploy\/kind\/gateway-checks\.sh"$/m);
  });

  it('runs the five checks again through the gateway, installed by the chart with the kind-agent service', () => {
    const text = readFileSync(GATEWAY_CHECKS, 'utf8');
    for (let n = 1; n <= 5; n++) assert.match(text, new RegExp(`say "gateway check ${n}: `));
    assert.match(text, /--set gateway\.enabled=true/);
    assert.match(text, /--set-file "gateway\.services\.kind-agent\\\.yaml=/);
    assert.match(text, /-H "Host: \$AGENT_HOST"/);
  });

  it("gives the gateway a kind-agent manifest its own parser takes: the agent's code as node's -e script", () => {
    const yaml = execFileSync(
      'bash',
      ['-c', '. deploy/kind/kind-agent-manifest.sh && kind_agent_manifest tether:dev deploy/kind/kind-agent.mjs'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    const [svc, ...more] = parseManifestText(yaml, 'kind-agent.yaml');
    assert.equal(more.length, 0);
    assert.equal(svc!.name, 'kind-agent');
    assert.equal(svc!.cookieName, 'agent');
    assert.equal(svc!.idlePolicy, 'delete');
    assert.equal(svc!.sessionTimeoutMs, 20_000);
    assert.equal(svc!.warmPool, 1);
    assert.equal(svc!.container.image, 'tether:dev');
    assert.deepEqual(svc!.container.argv.slice(0, 3), ['node', '--input-type=module', '-e']);
    assert.equal(svc!.container.argv[3]!.trim(), readFileSync(join(KIND, 'kind-agent.mjs'), 'utf8').trim());
    assert.equal(svc!.container.containerPort, 8080);
    // The agent is plain Node (the image holds no examples/ or test/): it must at least parse.
    execFileSync(process.execPath, ['--check', join(KIND, 'kind-agent.mjs')]);
  });

  it('runs the five checks, each failing with a FAIL: line', () => {
    const text = readFileSync(SCRIPT, 'utf8');
    for (let n = 1; n <= 5; n++) assert.match(text, new RegExp(`say "check ${n}: `));
    assert.match(text, /printf 'FAIL: %s\\n'/);
    assert.match(text, /set -euo pipefail/);
  });
});
