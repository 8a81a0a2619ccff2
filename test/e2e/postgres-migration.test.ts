/**
 * Moving from SQLite to PostgreSQL with docs/postgres.md's commands: `tether export` from a SQLite server
 * and `tether import` into a `--store postgres` one keep the identical history (ids included) and the
 * same current beliefs (a superseded value stays superseded, a retraction stays).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { startMemoryServer } from '../../src/server/standalone.ts';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { newAdminKey } from '../helpers/memory-replicas.ts';
import { startTestMemoryServer } from '../helpers/memory-server.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { execTether } from '../helpers/tether-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tether-migrate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('tether export from SQLite + tether import into PostgreSQL keep the identical history', async (t) => {
  const admin = newAdminKey();
  const pg = await startPostgres();
  t.after(() => pg.stop());
  const source = await startTestMemoryServer({ adminKey: admin });
  t.after(() => source.close());
  const target = await startMemoryServer({
    port: 0,
    dataDir: join(dir, 'pg-admin'),
    store: await openPostgresStore({ url: await pg.createDatabase() }),
    defaultRegistry: starterRegistry('personal'),
    log: silentLogger(),
    adminKey: admin,
  });
  t.after(() => target.close());

  const key = await source.agentKey('movers', 'run');
  const say = (body: unknown) => source.call('POST', '/v1/memories', { key, body });
  await say({ subject: 'user', predicate: 'lives_in', value: 'Oslo', observed_at: Date.UTC(2026, 0, 1) });
  await say({ subject: 'user', predicate: 'lives_in', value: 'Rome', observed_at: Date.UTC(2026, 1, 1) });
  await say({ statements: [1, 2, 3].map((i) => ({ subject: 'user', predicate: 'note', value: `likes tea ${i}` })) });
  await source.call('POST', '/v1/memories/forget', {
    key,
    body: { subject: 'user', predicate: 'note', value: 'likes tea 2' },
  });
  const other = await source.agentKey('movers', 'other');
  await source.call('POST', '/v1/memories', {
    key: other,
    body: { subject: 'bob', predicate: 'favorite_color', value: 'teal' },
  });

  const file = join(dir, 'all.ndjson');
  // Asynchronously: the servers run in this process.
  const { stdout: exported } = await execTether(['export', '--url', source.url, '--key', admin]);
  writeFileSync(file, exported);
  const lines = exported.trim().split('\n');
  // 7 events, and before each tenant's first event its registry versions (one tenant here).
  assert.equal(lines.filter((l) => !l.startsWith('{"registry_version"')).length, 7);
  assert.equal(lines.filter((l) => l.startsWith('{"registry_version"')).length, 1);
  await execTether(['import', '--url', target.url, '--key', admin, file]);

  const events = async (url: string) =>
    (await fetch(`${url}/v1/events`, { headers: { authorization: `Bearer ${admin}` } })).text();
  assert.equal(await events(target.url), await events(source.url), 'identical NDJSON: ids, times, actors, order');
  const beliefs = async (url: string, ns: string) =>
    (
      await (
        await fetch(`${url}/v1/memories?namespace=${ns}&subject=user`, {
          headers: { authorization: `Bearer ${admin}` },
        })
      ).json()
    ).beliefs.map((b: { predicate: string; value: unknown }) => `${b.predicate}=${b.value}`);
  assert.deepEqual(await beliefs(target.url, 'movers:run'), await beliefs(source.url, 'movers:run'));
  assert.deepEqual((await beliefs(target.url, 'movers:run')).sort(), [
    'lives_in=Rome',
    'note=likes tea 1',
    'note=likes tea 3',
  ]);
});
