#!/usr/bin/env node
// Builds the package: `tsc -p tsconfig.build.json` compiles src/ to dist/ (JS + .d.ts, same layout), then
// every file of src/ that is not TypeScript (console assets, SQL migrations, Lua scripts) is copied beside
// it, so code that finds its files through import.meta works the same from src/ and from dist/.
// Run by `npm install` (the `prepare` script) and `npm pack`; dist/ is emptied first, so a file deleted
// from src/ does not live on in dist/. Plain JS: it runs before anything is built, without tsx.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
cpSync(src, dist, { recursive: true, filter: (from) => !from.endsWith('.ts') });
