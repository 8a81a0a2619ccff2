/**
 * Shared fixtures for the engine tests: a fresh `MemoryEngine` + `MemoryReader` over a SQLite `:memory:`
 * store, a `ManualClock` at T0 and the `personal` starter registry, plus an assertion for 400 refusals.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { ManualClock } from '../../src/common/clock.ts';
import { isTetherError, type TetherError } from '../../src/common/errors.ts';
import { MemoryEngine, type Statement, type WriteContext } from '../../src/memory/engine.ts';
import { MemoryReader } from '../../src/memory/recall.ts';
import { starterRegistry } from '../../src/memory/registry.ts';
import { RegistryBook } from '../../src/memory/registry-book.ts';
import type { Actor } from '../../src/store/fact-store.ts';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

export const T0 = Date.UTC(2026, 0, 1);
export const MINUTE = 60_000;
export const NAMESPACE = 'acme:run-1';
export const ACTOR: Actor = { tenant: 'acme', agent: 'run-1', session: 'sandbox-pod-7', keyId: '00112233aabbccdd' };

/** A fresh engine on a fresh in-memory store; closed after the test. */
export function setup(t: TestContext) {
  const store = openSqliteStore({ dataDir: ':memory:' });
  t.after(() => store.close());
  const clock = new ManualClock(T0);
  const registries = new RegistryBook(store, clock, starterRegistry('personal'));
  const engine = new MemoryEngine({ store, registries, clock });
  const reader = new MemoryReader({ store, registries, clock });
  const ctx: WriteContext = { namespace: NAMESPACE, actor: ACTOR };
  const remember = (s: Statement) => engine.remember(ctx, [s]).then((r) => r[0]!);
  const values = async (subject: string, predicate: string, asOf?: number) =>
    (await reader.recall({ namespace: NAMESPACE, subject, predicate, asOf, limit: 100 })).map((b) => b.event.value);
  const search = async (q: string, asOf?: number) =>
    (await reader.recall({ namespace: NAMESPACE, q, asOf, limit: 100 })).map((b) => b.event.value);
  return { store, clock, registries, engine, reader, ctx, remember, values, search };
}

/** Asserts `promise` rejects with 400 `invalid_request` naming `field`; returns the error. */
export async function refused(promise: Promise<unknown>, field: string, message?: RegExp): Promise<TetherError> {
  let caught: unknown;
  await assert.rejects(promise, (err) => {
    caught = err;
    return true;
  });
  assert.ok(isTetherError(caught), `a TetherError, got ${String(caught)}`);
  const err = caught as TetherError;
  assert.equal(err.code, 'invalid_request');
  assert.equal(err.status, 400);
  assert.equal(err.field, field);
  if (message) assert.match(err.message, message);
  return err;
}
