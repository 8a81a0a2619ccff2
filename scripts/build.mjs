#!/usr/bin/env node
// Builds the package: `tsc -p tsconfig.build.json` compiles src/ to dist/ (JS + .d.ts, same layout), then
// every file of src/ that is not TypeScript (console assets, SQL migrations, Lua scripts) is copied beside
// it, so code that finds its files through import.meta works the same from src/ and from dist/.
// Run by `npm install` (the `prepare` script) and `npm pack`; dist/ is emptied first, so a file deleted
// from src/ does not live on in dist/. Plain JS: it runs before anything is built, without tsx. Last it writes
// dist/.source-hash, the fingerprint of the src/ it compiled (scripts/source-hash.mjs): the tests run this dist/
// only while it matches src/, and src/ through tsx otherwise.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SOURCE_HASH_FILE, sourceHash } from './source-hash.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

// Taken before compiling: an edit made during the build then leaves a mismatch (tests run src/), never a match.
const hash = sourceHash(root);
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
cpSync(src, dist, { recursive: true, filter: (from) => !from.endsWith('.ts') });
writeFileSync(join(dist, SOURCE_HASH_FILE), `${hash}\n`);
