/**
 * Every shell block of README.md and docs/*.md runs here, as a new user pastes it, or says why it cannot
 * (test/docs/shell-blocks.ts: ```sh cluster, or `<!-- not run: reason -->` before the block).
 *
 * The runnable blocks of one page run in order in one bash (variables carry over, as in one terminal) against
 * one `tether up` this test starts: free ports, a temp folder as the working directory with the data folder
 * in `.tether` (so `cat .tether/memory/admin.key` reads the platform's key), `bin` and `examples` linked
 * from the checkout (so `./bin/tether` works), the default services (examples/services, examples/platform).
 * The convention that makes the docs' addresses reach it: `127.0.0.1:8080`, `:8081` and `:8082` in a block are
 * replaced by the memory server's, the gateway's and its admin port's real addresses, and TETHER_URL,
 * TETHER_GATEWAY_ADMIN_URL and TETHER_DATA are set to them for the CLI's defaults. `curl` runs with
 * --fail-with-body, so an HTTP error fails its block; so does any command that exits non-zero (set -e).
 * Pages run side by side; pages that write memory use namespaces of their own.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fromSource, spawnTether } from '../helpers/tether-cli.ts';
import { type ShellBlock, shellBlocks } from './shell-blocks.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const BLOCKS = PAGES.flatMap((page) => shellBlocks(page, readFileSync(join(ROOT, page), 'utf8')));
/** Blocks marked as not run for another reason than a cluster: kept few, each with its reason. */
const MOST_NOT_RUN = 6;

/** What a page's output must show beyond every command succeeding. */
const EXPECT: Record<string, (out: string, calls: Call[]) => void> = {
  'README.md': (out) => {
    assert.match(out, /"fresh":true/, 'alice starts fresh');
    assert.match(out, /"prefers":\["window seat"\]/);
    assert.equal((out.match(/"code":"namespace_mismatch"/g) ?? []).length, 2, 'bob may neither recall nor resume');
    assert.match(out, /# Resume briefing for default:memory-agent-[0-9a-f]{32}/);
    assert.match(out, /\[2\] user: book the flights/, 'the briefing holds her turns');
  },
  'docs/memory-api.md': (_out, calls) => {
    const asOf = calls.find((c) => c.command.includes('as_of='));
    assert.ok(asOf, 'the as_of read ran');
    const beliefs = (JSON.parse(asOf.answer) as { beliefs: Array<{ predicate: string; value: unknown }> }).beliefs;
    assert.deepEqual(
      beliefs.filter((b) => b.predicate === 'favorite_color').map((b) => b.value),
      ['blue'],
      'as of February the older value holds',
    );
    const now = calls.find((c) => c.command.includes('predicate=favorite_color') && !c.command.includes('history'));
    assert.match(now?.answer ?? '', /"green"/);
  },
  'docs/cli.md': (out) => {
    assert.match(out, /1985-04-12/, 'the birthday was remembered and recalled');
    assert.match(out, /memory-agent-|ai-agent-/, 'instances listed');
  },
  'docs/gateway.md': (out) => {
    assert.equal((out.match(/^HTTP\/1\.1 200/gm) ?? []).length, 2, 'two sessions served');
    assert.match(out, /"service":"ai-agent-delete"/);
  },
};

interface Call {
  command: string;
  answer: string;
}

interface Platform {
  child: ChildProcess;
  cwd: string;
  memory: string;
  gateway: string;
  admin: string;
}

/** `tether up` as a child process in a temp folder; its URLs read from its banner. */
async function startPlatform(cwd: string): Promise<Platform> {
  const child = spawnTether(
    [
      'up',
      '--data',
      join(cwd, '.tether'),
      '--memory-port',
      '0',
      '--port',
      '0',
      '--admin-port',
      '0',
      '--services',
      join(ROOT, 'examples/services'),
      join(ROOT, 'examples/platform'),
    ],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: cwd } },
  );
  let out = '';
  const read = (c: Buffer) => {
    out += c.toString();
  };
  child.stdout?.on('data', read);
  child.stderr?.on('data', read);
  // Resolves at the banner; fails if the process exits first or, a generous bound that only stops a hang
  // (start-up takes seconds, more on a loaded machine), after 120 s. The process is killed on failure.
  await new Promise<void>((ok, fail) => {
    const onExit = () => {
      clearTimeout(hang);
      fail(new Error(`tether up exited before its banner:\n${out}`));
    };
    child.once('exit', onExit);
    const hang = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`no banner in 120 s:\n${out}`));
    }, 120_000);
    const check = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (!out.includes('Tether is up.')) return void setTimeout(check, 100);
      clearTimeout(hang);
      child.off('exit', onExit);
      ok();
    };
    check();
  });
  const gateway = /session gateway (http:\/\/\S+)\s+admin (http:\/\/\S+)\/_tether/.exec(out);
  const memory = /memory server\s+(http:\/\/\S+)/.exec(out);
  assert.ok(gateway && memory, out);
  const strip = (u: string) => u.replace(/\/$/, '');
  return {
    child,
    cwd,
    memory: strip(memory[1] as string),
    gateway: strip(gateway[1] as string),
    admin: strip(gateway[2] as string),
  };
}

/** The page's runnable blocks as one script, the docs' addresses replaced by the platform's. */
function pageScript(blocks: ShellBlock[], p: Platform): string {
  const hostOf = (url: string) => url.replace(/^http:\/\//, '');
  return blocks
    .map(
      (b) =>
        `# ${b.file}:${b.line}\n${b.code
          .replaceAll('127.0.0.1:8080', hostOf(p.memory))
          .replaceAll('127.0.0.1:8081', hostOf(p.gateway))
          .replaceAll('127.0.0.1:8082', hostOf(p.admin))}`,
    )
    .join('\n');
}

const WRAPPER = `set -eo pipefail
trap 'echo "failed: line $LINENO of the script: $BASH_COMMAND" >&2' ERR
curl() { printf '>>> curl %s\\n' "$*" >> "$TRANSCRIPT"; command curl --fail-with-body -sS -w '\\n' "$@" | tee -a "$TRANSCRIPT"; }
`;

/** Runs `script` with bash in the platform's folder; stdout, stderr and the curl transcript. */
function runPage(
  script: string,
  p: Platform,
  transcript: string,
): Promise<{ code: number; out: string; err: string; calls: Call[] }> {
  // ./bin/tether in a block runs as the helper's spawns do: dist/ if built from this src/, else src/ through tsx,
  // never a dist/ left stale by an edit (test/helpers/tether-cli.ts).
  const env = fromSource({
    PATH: process.env.PATH ?? '',
    HOME: p.cwd,
    TETHER_URL: p.memory,
    TETHER_GATEWAY_ADMIN_URL: p.admin,
    TETHER_DATA: join(p.cwd, '.tether'),
    TRANSCRIPT: transcript,
  });
  return new Promise((ok, fail) => {
    const child = spawn('bash', ['-c', WRAPPER + script], { cwd: p.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c;
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c;
    });
    // Only a hang is cut: a page takes seconds to a minute or two (each CLI start costs seconds).
    const hang = setTimeout(() => child.kill('SIGKILL'), 400_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(hang);
      const text = existsSync(transcript) ? readFileSync(transcript, 'utf8') : '';
      const calls = text
        .split('>>> ')
        .filter(Boolean)
        .map((chunk) => {
          const [command, ...answer] = chunk.split('\n');
          return { command: command ?? '', answer: answer.join('\n').trim() };
        });
      ok({ code: code ?? -1, out, err, calls });
    });
  });
}

/** Keys and tokens out of a failure message. */
function masked(text: string): string {
  return text.replace(/tth_[0-9a-f]{16}_[0-9a-f]{64}/g, 'tth_…').slice(-6000);
}

describe('shell blocks of README.md and docs/*.md', () => {
  it('are each run below or marked as needing a cluster or not run, with a reason', () => {
    assert.ok(BLOCKS.length >= 8, `${BLOCKS.length} shell blocks found`);
    const notRun = BLOCKS.filter((b) => b.notRun?.kind === 'not run');
    assert.ok(
      notRun.length <= MOST_NOT_RUN,
      `at most ${MOST_NOT_RUN} blocks may be left unrun; now:\n${notRun
        .map((b) => `${b.file}:${b.line}: ${b.notRun?.reason}`)
        .join('\n')}`,
    );
    const runnable = new Set(BLOCKS.filter((b) => b.notRun === null).map((b) => b.file));
    const checked = Object.keys(EXPECT).filter((page) => !runnable.has(page));
    assert.deepEqual(checked, [], 'pages with expectations but no runnable block');
  });

  it('use ./bin/tether in runnable blocks, never a bare tether (which needs npm link)', () => {
    const bare = BLOCKS.filter((b) => b.notRun === null).flatMap((b) =>
      b.code
        .split('\n')
        .filter((l) => /(^|[\s;&|($])tether\s/.test(l.replace(/\s#.*$/, '')) && !/\.\/bin\/tether\s/.test(l))
        .map((l) => `${b.file}:${b.line}: ${l}`),
    );
    assert.deepEqual(bare, []);
  });
});

describe('runnable shell blocks against a real tether up', { concurrency: true }, () => {
  let platform: Platform;
  before(async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'tether-docs-'));
    symlinkSync(join(ROOT, 'bin'), join(cwd, 'bin'));
    symlinkSync(join(ROOT, 'examples'), join(cwd, 'examples'));
    platform = await startPlatform(cwd);
  });
  after(async () => {
    if (platform && platform.child.exitCode === null) {
      platform.child.kill('SIGTERM');
      await once(platform.child, 'exit');
    }
    if (platform) await rm(platform.cwd, { recursive: true, force: true });
  });

  for (const page of PAGES) {
    const blocks = BLOCKS.filter((b) => b.file === page && b.notRun === null);
    if (blocks.length === 0) continue;
    it(`${page}: ${blocks.length} block(s) run as written`, { timeout: 600_000 }, async () => {
      const transcript = join(platform.cwd, `.transcript-${page.replace(/\W/g, '_')}`);
      const { code, out, err, calls } = await runPage(pageScript(blocks, platform), platform, transcript);
      assert.equal(code, 0, masked(`${err}\n--- stdout:\n${out}`));
      EXPECT[page]?.(out, calls);
    });
  }
});
