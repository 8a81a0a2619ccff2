/**
 * @module
 * In-process remember throughput (no HTTP): `node --import tsx bench/lib/remember-profile.ts [dataDir]`.
 * Separates the engine + SQLite cost from the HTTP layer when bench:memory's remembers/s moves. With a
 * data folder (a copy of a loaded bench database: it is written to), it writes bench:memory's remember
 * mix (note / prefers / lives_in over the dataset's Zipf subjects) into that store; without one, into a
 * fresh temp store. Prints the rate and the mean batch (group commit) size. Env: N, CLIENTS, SUBJECTS,
 * WAL_COPY=<file> (copy the WAL before close; run the store with `wal_autocheckpoint` off to keep it all).
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../../src/common/clock.ts';
import { MemoryEngine } from '../../src/memory/engine.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { MemoryDataset } from './memory-data.ts';
import { CITIES } from './words.ts';

const N = Number(process.env.N ?? 20_000);
const CLIENTS = Number(process.env.CLIENTS ?? 8);
const given = process.argv[2];
const dir = given ?? mkdtempSync(join(tmpdir(), 'tether-remember-'));
const store = openSqliteStore({ dataDir: dir });
const events = await store.countEvents();
const writes = new MemoryDataset(7, 0, 1);
writes.useSubjects(Number(process.env.SUBJECTS ?? Math.max(5_000, Math.round(events / 20))));
const registries = new RegistryBook(store, systemClock, starterRegistry('personal'));
const engine = new MemoryEngine({ store, registries, clock: systemClock });
const ctx = { namespace: 'acme:main', actor: { tenant: 'acme', agent: 'main', session: null, keyId: null } };

let i = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    while (i < N) {
      const k = i++;
      const u = (k * 2654435761) % 100;
      const predicate = u < 60 ? 'note' : u < 85 ? 'prefers' : 'lives_in';
      const value =
        predicate === 'lives_in'
          ? `${CITIES[k % CITIES.length]} p${k}`
          : `${writes.words(predicate === 'note' ? 5 : 2)} p${k}`;
      await engine.remember(ctx, [{ subject: writes.randomSubject(), predicate, value }]);
    }
  }),
);
const secs = (performance.now() - t0) / 1000;
const commits = engine.writeStats.batches;
process.stdout.write(
  `${N} remembers on ${events} events, ${CLIENTS} concurrent: ${Math.round(N / secs)}/s, ` +
    `${commits} commits (mean batch ${(N / Math.max(1, commits)).toFixed(1)})\n`,
);
// The WAL as the run left it (before close folds it back), for bench/lib/wal-pages.ts.
if (process.env.WAL_COPY) copyFileSync(join(dir, 'tether.db-wal'), process.env.WAL_COPY);
await store.close();
if (!given) rmSync(dir, { recursive: true, force: true });
