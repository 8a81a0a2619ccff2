/**
 * @module
 * In-process remember throughput on a file store (no HTTP): `node --import tsx bench/lib/remember-profile.ts`.
 * Separates the engine + SQLite cost from the HTTP layer when bench:memory's remembers/s moves.
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

const N = Number(process.env.N ?? 20_000);
const CLIENTS = Number(process.env.CLIENTS ?? 8);
const dir = mkdtempSync(join(tmpdir(), 'tether-remember-'));
const store = openSqliteStore({ dataDir: dir });
const registries = new RegistryBook(store, systemClock, starterRegistry('personal'));
const engine = new MemoryEngine({ store, registries, clock: systemClock });
const ctx = { namespace: 'acme:main', actor: { tenant: 'acme', agent: 'main', session: null, keyId: null } };
let i = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (i < N) {
      const k = i++;
      await engine.remember(ctx, [{ subject: `s${k % 5000}`, predicate: 'note', value: `fact ${k} coffee tea` }]);
    }
  }),
);
const secs = (performance.now() - t0) / 1000;
process.stdout.write(`${N} remembers, ${CLIENTS} concurrent: ${Math.round(N / secs)}/s\n`);
await store.close();
rmSync(dir, { recursive: true, force: true });
