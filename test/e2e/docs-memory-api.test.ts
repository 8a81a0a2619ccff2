/**
 * docs/memory-api.md's walkthrough, run as written (bash + curl) against a real memory server: every
 * call succeeds (curl --fail-with-body), and its `as_of` read answers the older value, not `[]`. Only the
 * server URL is changed (a free port) and the admin key file is where the block reads it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { startTestMemoryServer } from '../helpers/memory-server.ts';

const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/memory-api.md'), 'utf8');
const DOC_URL = 'URL=http://127.0.0.1:8080';

/** The ```sh block that starts the walkthrough. */
function walkthrough(): string {
  const block = [...DOC.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((b) => b.startsWith('ADMIN=$(cat .tether/memory/admin.key)'));
  assert.ok(block, 'docs/memory-api.md has the walkthrough block');
  assert.ok(block.includes(DOC_URL), block);
  return block;
}

/** Runs `script` with bash in `cwd`; every curl call and its answer also go to a transcript file. */
function runBash(script: string, cwd: string): Promise<{ code: number; stderr: string; transcript: string }> {
  const wrapper = `set -eo pipefail
curl() { printf '>>> %s\\n' "$*" >> .transcript; command curl --fail-with-body -sS -w '\\n' "$@" | tee -a .transcript; }
`;
  return new Promise((ok, fail) => {
    const child = spawn('bash', ['-c', wrapper + script], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c;
    });
    child.on('error', fail);
    child.on('close', (code) => {
      const transcript = existsSync(join(cwd, '.transcript')) ? readFileSync(join(cwd, '.transcript'), 'utf8') : '';
      ok({ code: code ?? -1, stderr, transcript });
    });
  });
}

describe("docs/memory-api.md's walkthrough", () => {
  it('runs as written, and its as_of read answers the older value', async (t) => {
    const server = await startTestMemoryServer();
    t.after(() => server.close());
    const cwd = await mkdtemp(join(tmpdir(), 'tether-readme-'));
    t.after(() => rm(cwd, { recursive: true, force: true }));
    mkdirSync(join(cwd, '.tether', 'memory'), { recursive: true });
    writeFileSync(join(cwd, '.tether', 'memory', 'admin.key'), server.adminKey);

    const script = walkthrough().replace(DOC_URL, `URL=${server.url.replace(/\/$/, '')}`);
    const { code, stderr, transcript } = await runBash(script, cwd);
    assert.equal(code, 0, `${stderr}\n${transcript}`);
    const calls = transcript
      .split('>>> ')
      .filter(Boolean)
      .map((chunk) => {
        const [command, ...answer] = chunk.split('\n');
        return { command: command ?? '', answer: answer.join('\n').trim() };
      });
    const asOf = calls.find((c) => c.command.includes('as_of='));
    assert.ok(asOf, transcript);
    const beliefs = (JSON.parse(asOf.answer) as { beliefs: Array<{ predicate: string; value: unknown }> }).beliefs;
    assert.deepEqual(
      beliefs.filter((b) => b.predicate === 'favorite_color').map((b) => b.value),
      ['blue'],
      asOf.answer,
    );
    const now = calls.find((c) => c.command.includes('predicate=favorite_color') && !c.command.includes('history'));
    assert.match(now?.answer ?? '', /"green"/);
  });
});
