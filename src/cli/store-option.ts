/**
 * @module
 * `--store`: which store `tether memory` runs on. `sqlite` (default) is opened by the server in its
 * data folder; `postgres` is opened here from `--postgres-url` with a pool of `--pool-size`, and the
 * data folder then holds only `admin.key` (when no `TETHER_ADMIN_KEY` is given).
 */
import type { Logger } from '../common/log.ts';
import { maskUrl } from '../store/postgres/connection.ts';
import { openPostgresStore } from '../store/postgres/postgres-store.ts';
import type { Store } from '../store/store.ts';

/** The flags this option reads. */
export interface StoreFlags {
  store: string;
  postgresUrl?: string;
  poolSize: string;
}

/**
 * Opens the store the flags name; undefined for SQLite (the server opens it in `--data`).
 * @throws {Error} for an unknown store, a missing URL, a bad pool size, or a database that cannot be
 *   reached (naming host and port; the password is never in a message)
 */
export async function openStoreOption(flags: StoreFlags, log: Logger): Promise<Store | undefined> {
  if (flags.store === 'sqlite') return undefined;
  if (flags.store !== 'postgres') throw new Error(`--store must be sqlite or postgres: got ${flags.store}`);
  if (!flags.postgresUrl) throw new Error('--store postgres needs --postgres-url (or TETHER_POSTGRES_URL)');
  const poolSize = Number(flags.poolSize);
  if (!Number.isInteger(poolSize) || poolSize < 2 || poolSize > 1000) {
    throw new Error(`--pool-size must be an integer 2..1000: got ${flags.poolSize}`);
  }
  const channel = log.child({ component: 'store-channel', database: maskUrl(flags.postgresUrl) });
  return openPostgresStore({
    url: flags.postgresUrl,
    poolSize,
    onChannelState: (state, detail) => {
      if (state === 'dropped') channel.warn({ detail }, 'change channel dropped; reconnecting (caches flush after)');
      else channel.info('change channel listening');
    },
  });
}
