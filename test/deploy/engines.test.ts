/**
 * The Node.js versions the README promises (package.json `engines`, ">= 20") are the ones every locked
 * dependency accepts: `npm install` on the oldest of them prints no EBADENGINE warning. Reads
 * package-lock.json as npm does; a dependency that raises its floor fails here, naming it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

describe('engines', () => {
  it('every locked package accepts the oldest Node.js that package.json allows', () => {
    const oldest = semver.minVersion(pkg.engines.node);
    assert.ok(oldest, pkg.engines.node);
    assert.equal(oldest.major, 20, 'the README says Node.js >= 20');
    const refusing = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !Array.isArray(p.engines) && p.engines?.node !== undefined)
      .filter(([, p]) => !semver.satisfies(oldest, (p.engines as { node: string }).node))
      .map(([path, p]) => `${path}@${p.version} wants node ${(p.engines as { node: string }).node}`);
    assert.deepEqual(refusing, [], `npm install on Node.js ${oldest.version} would warn EBADENGINE`);
  });
});
