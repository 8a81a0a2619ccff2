/**
 * Runs the crash-and-resume example end to end on this machine: a memory server on a temp folder, a
 * worker that does steps 1-2 and is killed with SIGKILL, then a new worker that waits for the lease
 * to lapse, resumes at step 3 and finishes. Prints what happens and the turn log.
 *   node --import tsx examples/resume/run.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { startMemoryServer } from '../../src/server/standalone.ts';
import { runCrashAndResume } from './scenario.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'tether-resume-example-'));
const adminKey = `tth_${'0'.repeat(15)}1_${'ab'.repeat(32)}`;
const server = await startMemoryServer({
  ...openSqlite(dataDir),
  port: 0,
  dataDir,
  defaultRegistry: starterRegistry('personal'),
  log: silentLogger(),
  adminKey,
});
try {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const { key } = await runCrashAndResume({ url: server.url, adminKey, log });
  const res = await fetch(new URL('/v1/turns', server.url), { headers: { authorization: `Bearer ${key}` } });
  const { turns } = (await res.json()) as { turns: { seq: number; epoch: number; content: string }[] };
  log('turn log:');
  for (const t of turns) log(`  [${t.seq}] epoch ${t.epoch}: ${t.content}`);
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
