/**
 * @module
 * One measurement of the writer's cost of a batch into one big multi-valued fact: `batches` batches of
 * `size` new `note` values into one subject, then one back-dated statement, through the engine on a
 * file-backed SQLite store (fresh temp folder). Prints JSON `{ batchMs: number[], backdatedMs }`.
 * Run side by side on two checkouts to compare (`node --import tsx bench/lib/big-fact-batches.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../../src/common/clock.ts';
import { MemoryEngine } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

const batches = Number(process.argv[2] ?? 16);
const size = Number(process.argv[3] ?? 500);
const dir = mkdtempSync(join(tmpdir(), 'tether-bigfact-'));
const store = openSqliteStore({ dataDir: dir });
const clock = systemClock;
const registries = new RegistryBook(store, clock, starterRegistry('coding'));
const engine = new MemoryEngine({ store, registries, clock });
const ctx = {
  namespace: 'bench:big-fact',
  actor: { tenant: 'bench', agent: 'big-fact', session: null, keyId: null },
};
try {
  const batchMs: number[] = [];
  for (let b = 0; b < batches; b++) {
    const statements = Array.from({ length: size }, (_, i) => ({
      subject: 'project',
      predicate: 'note',
      value: `note ${b}-${i} about the build`,
    }));
    const t0 = performance.now();
    await engine.remember(ctx, statements);
    batchMs.push(Math.round(performance.now() - t0));
  }
  const t0 = performance.now();
  await engine.remember(ctx, [
    { subject: 'project', predicate: 'note', value: 'an old note', observedAt: Date.now() - 86_400_000 },
  ]);
  const backdatedMs = Math.round(performance.now() - t0);
  console.log(JSON.stringify({ batchMs, backdatedMs }));
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
