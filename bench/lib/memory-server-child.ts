/**
 * @module
 * Runs one memory server in its own process, so a bench can read that process's RSS alone.
 * Usage: `node --import tsx bench/lib/memory-server-child.ts <dataDir> [postgresUrl [poolSize]]`: SQLite
 * in `dataDir`, or with a URL a `--store postgres` replica (admin key from `TETHER_ADMIN_KEY`, as every
 * replica of one database shares it). Listens on 127.0.0.1 with a free port, prints one JSON line
 * `{"url", "pid", "adminKeyFile"}` on stdout, and closes cleanly (in-flight requests finish, the store
 * is closed) on SIGTERM or SIGINT, or when stdin closes.
 */
import { pickStore } from '../../src/cli/drivers.ts';
import { silentLogger } from '../../src/common/log.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { startMemoryServer } from '../../src/server/standalone.ts';

const [dataDir, postgresUrl, poolSize] = process.argv.slice(2);
if (!dataDir) {
  process.stderr.write('usage: memory-server-child.ts <dataDir> [postgresUrl [poolSize]]\n');
  process.exit(2);
}

// The driver table, as `tether memory --store sqlite|postgres` picks it.
const store = await pickStore(
  { store: postgresUrl ? 'postgres' : 'sqlite', data: dataDir, postgresUrl, poolSize: poolSize ?? '10' },
  silentLogger(),
);
const running = await startMemoryServer({
  ...store,
  host: '127.0.0.1',
  port: 0,
  dataDir,
  adminKey: process.env.TETHER_ADMIN_KEY,
  defaultRegistry: starterRegistry('personal'),
  log: silentLogger(),
  // The bench is many clients on one key at thousands of requests a second: no per-key limit.
  limits: { perKeyPerSecond: 0 },
});
process.stdout.write(`${JSON.stringify({ url: running.url, pid: process.pid, adminKeyFile: running.adminKeyFile })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  try {
    await running.close();
    process.exit(0);
  } catch (err) {
    process.stderr.write(`memory-server-child: close failed: ${String(err)}\n`);
    process.exit(1);
  }
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent holds our stdin open; if it dies, stdin ends and we stop too.
process.stdin.on('end', stop);
process.stdin.resume();
