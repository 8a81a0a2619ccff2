/**
 * @module
 * The bootstrap admin key (tenant `*`): from `TETHER_ADMIN_KEY`, else read from `<data>/admin.key`,
 * else minted on first start and written there with mode 0600. The key itself is never logged.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, restrictIfExists, writePrivateFile } from '../common/private-files.ts';
import type { KeyStore } from '../store/key-store.ts';
import { mintKey, parseKey } from './keys.ts';

/** Where the admin key came from. */
export interface BootstrapResult {
  /** Path of the key file, or null when the key came from the environment. */
  keyFile: string | null;
  keyId: string;
}

/**
 * Makes sure the bootstrap admin key exists in the store.
 * @param dataDir folder for `admin.key` (`:memory:` keeps no file; the key must come from `envKey`)
 * @throws {Error} when `envKey` is malformed or the file holds a malformed key.
 */
export async function ensureAdminKey(
  store: KeyStore,
  dataDir: string,
  envKey: string | undefined,
  now: number,
): Promise<BootstrapResult> {
  let key = envKey?.trim() || undefined;
  let keyFile: string | null = null;
  if (key !== undefined) {
    if (!parseKey(key)) throw new Error('TETHER_ADMIN_KEY must look like tth_<16 hex>_<64 hex>');
  } else if (dataDir !== ':memory:') {
    keyFile = join(dataDir, 'admin.key');
    if (existsSync(keyFile)) {
      key = readFileSync(keyFile, 'utf8').trim();
      if (!parseKey(key)) throw new Error(`${keyFile} does not hold a key of the form tth_<16 hex>_<64 hex>`);
    }
  }
  const minted = mintKey({ tenant: '*', note: 'bootstrap admin key', now, ...(key ? { fixedKey: key } : {}) });
  const existing = await store.getKey(minted.record.id);
  if (!existing) {
    // Replicas sharing a store start at once with the same TETHER_ADMIN_KEY: one insert wins.
    await store.insertKey(minted.record).catch(async (err: unknown) => {
      if ((await store.getKey(minted.record.id))?.hash !== minted.record.hash) throw err;
    });
  } else if (existing.hash !== minted.record.hash) throw new Error('the admin key id exists with another secret');
  if (keyFile !== null && !existsSync(keyFile)) {
    ensurePrivateDir(dataDir); // with PostgreSQL nothing else made the folder
    writePrivateFile(keyFile, `${minted.key}\n`);
  } else if (keyFile !== null) restrictIfExists(keyFile);
  return { keyFile, keyId: minted.record.id };
}
