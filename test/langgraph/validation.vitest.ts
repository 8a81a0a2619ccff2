/**
 * LangGraph's checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`, `specTest`)
 * against a real memory server: `TetherCheckpointSaver` on SQLite and on PostgreSQL, and LangGraph's
 * own `MemorySaver` beside them as the reference. Run by `run-validation.ts` (vitest, globals), which
 * decides the verdict: a saver's failure is allowed only where the reference fails the same test.
 * Names avoid the suite's skip list, so no test of it is skipped for any of the three.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import { specTest } from '@langchain/langgraph-checkpoint-validation';
import { silentLogger } from '../../src/common/log.ts';
import { TetherCheckpointSaver } from '../../src/langgraph/checkpoint-saver.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { type RunningMemoryServer, startMemoryServer } from '../../src/server/standalone.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { startTestMemoryServer, type TestMemoryServer } from '../helpers/memory-server.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

/** The reference, and the name the verdict looks for. */
export const REFERENCE = 'MemorySaver (reference)';

specTest({ checkpointerName: REFERENCE, createCheckpointer: () => new MemorySaver() });

/** A memory server for one run. */
interface Server {
  url: string;
  adminKey: string;
  close(): Promise<void>;
}

/**
 * An initializer over the memory server `start` gives: each saver works in a namespace of its own (a
 * fresh agent key), as the suite expects a new checkpointer to hold nothing; it releases its lease
 * when the suite destroys it.
 */
function tetherInitializer(name: string, start: () => Promise<Server>) {
  let server: Server | undefined;
  return {
    checkpointerName: name,
    beforeAllTimeout: 120_000,
    async beforeAll() {
      server = await start();
    },
    async afterAll() {
      await server?.close();
    },
    async createCheckpointer() {
      const s = server as Server;
      const res = await fetch(new URL('/v1/keys', s.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tenant: 'langgraph', agent: `v-${randomUUID()}` }),
      });
      if (res.status !== 201) throw new Error(`minting a key failed: ${res.status} ${await res.text()}`);
      const { key } = (await res.json()) as { key: string };
      return new TetherCheckpointSaver({ url: s.url, key });
    },
    destroyCheckpointer: (saver: TetherCheckpointSaver) => saver.close(),
  };
}

specTest(
  tetherInitializer('TetherCheckpointSaver (SQLite)', async () => {
    const s: TestMemoryServer = await startTestMemoryServer({ limits: { perKeyPerSecond: 0 } });
    return { url: s.url, adminKey: s.adminKey, close: () => s.close() };
  }),
);

specTest(
  tetherInitializer('TetherCheckpointSaver (PostgreSQL)', async () => {
    const pg: TestPostgres = await startPostgres();
    let running: RunningMemoryServer | undefined;
    const dataDir = mkdtempSync(join(tmpdir(), 'tether-lg-'));
    try {
      const store = await openPostgresStore({ url: await pg.createDatabase() });
      const adminKey = `tth_${randomUUID().replace(/-/g, '').slice(0, 16)}_${'ab'.repeat(32)}`;
      running = await startMemoryServer({
        port: 0,
        dataDir,
        store,
        limits: { perKeyPerSecond: 0 },
        adminKey,
        defaultRegistry: starterRegistry('personal'),
        log: silentLogger(),
      });
      const r = running;
      return {
        url: r.url,
        adminKey,
        async close() {
          await r.close();
          await pg.stop();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      await running?.close();
      await pg.stop();
      throw err;
    }
  }),
);
