/**
 * The package as a user gets it: `npm pack` (its `prepare` compiles src/ to dist/ afresh, in a copy of the
 * checkout so the developer's dist/ is left alone), the tarball installed into an empty folder with no tsx, then
 * a plain ESM `.mjs` remembers and recalls through `import { TetherClient } from 'tether'` with an agent key
 * against a real memory server, `tsc --noEmit` passes on a TypeScript consumer with the shipped types, and the
 * installed `tether` CLI runs compiled.
 *
 * Offline: the install is `npm ci --offline` from the npm cache, with a lock made from this repository's own
 * (the consumer's root plus tether's production entries), so it resolves the versions this repository tests
 * and needs no registry. `--ignore-scripts`: the SDK loads nothing native, and better-sqlite3's build would
 * cost a minute of CPU.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
/** No TETHER_* and no NODE_OPTIONS (no tsx loader) of this process reach the consumer. */
const PLAIN_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

interface LockEntry {
  dev?: boolean;
  [field: string]: unknown;
}

/** A lock for a consumer depending on `tarball` alone: tether's own production entries, hoisted the same way. */
function consumerLock(tarball: string): object {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const packages: Record<string, unknown> = {
    '': { name: 'consumer', dependencies: { tether: `file:${tarball}` } },
    'node_modules/tether': {
      version: pkg.version,
      resolved: `file:${tarball}`,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path !== '' && !entry.dev) packages[path] = entry;
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

const CONSUMER_MJS = `import { TetherClient } from 'tether';

const memory = TetherClient.fromKey({ url: process.env.TETHER_URL, key: process.env.TETHER_KEY });
const stored = await memory.remember({ subject: 'user', predicate: 'prefers', value: 'dark mode' });
const { beliefs } = await memory.recall({ subject: 'user' });
const who = await memory.whoami();
console.log(JSON.stringify({ stored: stored.stored, namespace: who.namespace, beliefs: beliefs.map((b) => [b.predicate, b.value]) }));
`;

const CONSUMER_TS = `import { type BeliefJson, TetherClient, TetherError, type WhoamiJson } from 'tether';

const memory: TetherClient = TetherClient.fromKey({ url: 'http://127.0.0.1:8080', key: 'tth_x' });
const beliefs: BeliefJson[] = (await memory.recall({ subject: 'user', predicate: 'prefers' })).beliefs;
const who: WhoamiJson = await memory.whoami();
const agent = await memory.resume({ holder: 'pod-1' });
await agent.recordTurn({ role: 'assistant', content: 'done' });
export const seen: string = \`\${who.namespace} \${beliefs.length} \${agent.epoch}\`;
export const isLeaseLost = (err: unknown): boolean => err instanceof TetherError && err.code === 'lease_lost';
// @ts-expect-error a statement needs a subject
await memory.remember({ predicate: 'prefers', value: 'dark mode' });
`;

describe('the npm package', () => {
  let work: string;
  let consumer: string;
  let srv: TestMemoryServer;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'tether-pack-'));
    srv = await startTestMemoryServer();
    // A copy of what the build needs, so prepare's rebuild of dist/ happens there, not in the checkout.
    const copy = join(work, 'tether');
    mkdirSync(copy);
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'bin', 'scripts', 'src']) {
      cpSync(join(ROOT, f), join(copy, f), { recursive: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: copy, env: process.env });
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];

    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    const tarball = `../${filename}`;
    writeFileSync(
      join(consumer, 'package.json'),
      // tether's overrides too: npm applies a dependency's overrides only at the root (they pin two transitive
      // packages to versions that run on Node 20).
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { tether: `file:${tarball}` },
        overrides: JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).overrides,
      }),
    );
    writeFileSync(join(consumer, 'package-lock.json'), JSON.stringify(consumerLock(tarball)));
    await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: consumer,
      env: { ...PLAIN_ENV, npm_config_cache: join(process.env.HOME ?? '', '.npm') },
    });
  });
  after(async () => {
    await srv?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('holds the compiled build and no sources, tests or benchmarks', () => {
    const installed = join(consumer, 'node_modules/tether');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(pkg.exports), ['.', './langgraph', './package.json']);
    for (const kept of ['dist/sdk/index.js', 'dist/sdk/index.d.ts', 'dist/cli/main.js', 'dist/console/index.html']) {
      assert.ok(readFileSync(join(installed, kept)).length > 0, kept);
    }
    for (const gone of ['src', 'test', 'bench', 'tsconfig.json']) {
      assert.throws(() => readFileSync(join(installed, gone)), { code: /ENOENT|EISDIR/ }, gone);
    }
    assert.throws(() => readFileSync(join(consumer, 'node_modules/tsx/package.json')), { code: 'ENOENT' });
  });

  it('remembers and recalls from plain ESM JavaScript with an agent key', async () => {
    const key = await srv.agentKey('acme', 'packaged');
    writeFileSync(join(consumer, 'agent.mjs'), CONSUMER_MJS);
    const { stdout } = await run(process.execPath, ['agent.mjs'], {
      cwd: consumer,
      env: { ...PLAIN_ENV, TETHER_URL: srv.url, TETHER_KEY: key },
    });
    assert.deepEqual(JSON.parse(stdout), {
      stored: true,
      namespace: 'acme:packaged',
      beliefs: [['prefers', 'dark mode']],
    });
    const held = await srv.call('GET', '/v1/memories?subject=user', { key });
    assert.equal(held.body.beliefs[0].value, 'dark mode');
  });

  it('type-checks a TypeScript consumer against the shipped declarations', async () => {
    writeFileSync(join(consumer, 'agent.ts'), CONSUMER_TS);
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          // The consumer's own @types/node (the SDK's types name node:events); tether's .d.ts are checked too.
          typeRoots: [join(ROOT, 'node_modules/@types')],
          types: ['node'],
        },
        files: ['agent.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', consumer], { cwd: consumer, env: PLAIN_ENV }).catch(
      (err: { stdout: string }) => ({ stdout: err.stdout, failed: true }),
    );
    assert.ok(!('failed' in checked), checked.stdout);
  });

  it('runs the installed tether CLI compiled, without tsx', async () => {
    const bin = join(consumer, 'node_modules/.bin/tether');
    assert.equal((await run(bin, ['--version'], { env: PLAIN_ENV })).stdout.trim(), '0.1.0');
    const key = await srv.agentKey('acme', 'cli');
    await srv.call('POST', '/v1/memories', { key, body: { subject: 'user', predicate: 'prefers', value: 'tea' } });
    const recalled = await run(bin, ['recall', 'user', '--json'], {
      env: { ...PLAIN_ENV, TETHER_URL: srv.url, TETHER_KEY: key },
    });
    assert.equal(JSON.parse(recalled.stdout).beliefs[0].value, 'tea');
  });
});
