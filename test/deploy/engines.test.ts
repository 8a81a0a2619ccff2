/**
 * The Node.js versions package.json promises are the ones every locked dependency accepts, so `npm install` on
 * the oldest of them prints no EBADENGINE warning. Two floors: `engines` (">= 20", what a user of the package
 * needs) binds every package the tarball installs; `devEngines` binds the development-only ones (the test
 * tools: LangGraph's validation suite brings vitest 4, whose bundler wants Node 20.19). Reads package-lock.json
 * as npm does; a dependency that raises its floor fails here, naming it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devEngines: { runtime: { name: string; version: string } };
};
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
};

/** Locked packages (dev-only ones or the others) whose `engines.node` refuses `node`. */
function refusing(node: semver.SemVer, dev: boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, p]) => path !== '' && Boolean(p.dev) === dev)
    .filter(([, p]) => !Array.isArray(p.engines) && p.engines?.node !== undefined)
    .filter(([, p]) => !semver.satisfies(node, (p.engines as { node: string }).node))
    .map(([path, p]) => `${path}@${p.version} wants node ${(p.engines as { node: string }).node}`);
}

describe('engines', () => {
  it('every package the tarball installs accepts the oldest Node.js that engines allows', () => {
    const oldest = semver.minVersion(pkg.engines.node);
    assert.ok(oldest, pkg.engines.node);
    assert.equal(oldest.major, 20, 'the README says Node.js >= 20');
    assert.deepEqual(refusing(oldest, false), [], `npm install on Node.js ${oldest.version} would warn EBADENGINE`);
  });

  it('every development-only package accepts the oldest Node.js that devEngines allows', () => {
    assert.equal(pkg.devEngines.runtime.name, 'node');
    const oldest = semver.minVersion(pkg.devEngines.runtime.version);
    assert.ok(oldest, pkg.devEngines.runtime.version);
    assert.equal(oldest.major, 20, 'development stays on Node.js 20');
    assert.deepEqual(refusing(oldest, true), [], `npm ci on Node.js ${oldest.version} would warn EBADENGINE`);
  });
});
