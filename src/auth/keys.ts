/**
 * @module
 * API keys: the `tth_<16 hex id>_<64 hex secret>` format, minting, and the hash that is the only
 * thing stored. The secret is 256 random bits, so one sha256 is enough (no slow KDF needed).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyRecord } from '../store/key-store.ts';

/** Matches a well-formed key. */
export const KEY_PATTERN = /^tth_([0-9a-f]{16})_([0-9a-f]{64})$/;

/** The parts of a key. */
export interface ParsedKey {
  id: string;
  secret: string;
}

/** Splits a key into id and secret; null when malformed. */
export function parseKey(key: string): ParsedKey | null {
  const m = KEY_PATTERN.exec(key);
  return m ? { id: m[1] as string, secret: m[2] as string } : null;
}

/** sha256 hex of a key secret. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a secret with a stored hash. */
export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What a new key is for. */
export interface MintKeyOptions {
  tenant: string;
  /** Present for agent keys (namespace `tenant:agent`), absent for admin keys. */
  agent?: string | null;
  session?: string | null;
  note?: string | null;
  /** Epoch ms; null for a key that never expires. */
  expiresAt?: number | null;
  /** Epoch ms. */
  now: number;
  /** Use this key text instead of a random one (bootstrap admin key from the environment). */
  fixedKey?: string;
}

/** A new key: the secret text (shown once) and the record to store. */
export function mintKey(options: MintKeyOptions): { key: string; record: KeyRecord } {
  let key = options.fixedKey;
  if (key === undefined) key = `tth_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`;
  const parsed = parseKey(key);
  if (!parsed) throw new Error('a key must look like tth_<16 hex>_<64 hex>');
  const agent = options.agent ?? null;
  return {
    key,
    record: {
      id: parsed.id,
      hash: hashSecret(parsed.secret),
      tenant: options.tenant,
      agent,
      session: options.session ?? null,
      admin: agent === null,
      note: options.note ?? null,
      createdAt: options.now,
      expiresAt: options.expiresAt ?? null,
      revokedAt: null,
    },
  };
}
