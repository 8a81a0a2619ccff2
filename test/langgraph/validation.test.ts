/**
 * LangGraph's checkpointer validation run (`run-validation.ts`: vitest over `validation.vitest.ts`, judged by
 * `verdict.ts`) as one test of the suite, so it runs beside the other files instead of before them all.
 * Passes when the run exits 0; its per-saver counts are reported as diagnostics, its whole output on failure.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');

it('LangGraph checkpointer validation: our saver on SQLite and PostgreSQL fails nothing the reference passes', async (t) => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'test/langgraph/run-validation.ts'],
      // A bound that only stops a hang: the run takes seconds to a minute.
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  const at = stdout.lastIndexOf('LangGraph checkpointer validation');
  const summary = at < 0 ? '' : stdout.slice(at);
  for (const line of summary.split('\n').filter(Boolean)) t.diagnostic(line);
  assert.equal(code, 0, `${stdout}\n${stderr}`.slice(-20_000));
});
