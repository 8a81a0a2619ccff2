/**
 * @module
 * The `Store` every storage driver implements (SQLite, PostgreSQL): the composition of the ports its
 * callers use, each in its own file with its records — facts and events (`fact-store.ts`), registry
 * versions (`registry-store.ts`), keys (`key-store.ts`), leases (`lease-store.ts`), resume records
 * and checkpoints (`resume-store.ts`), lifecycle (`store-lifecycle.ts`). One object implements them
 * all; a caller takes only the port it needs. Drivers hold no memory semantics — folding, validation
 * and tenancy live in `memory/` and `server/`. `test/store/conformance.ts` checks any driver.
 */
import type { FactStore } from './fact-store.ts';
import type { KeyStore } from './key-store.ts';
import type { LeaseStore } from './lease-store.ts';
import type { RegistryStore } from './registry-store.ts';
import type { ResumeStore } from './resume-store.ts';
import type { StoreLifecycle } from './store-lifecycle.ts';

/** Storage for Tether: every port of one driver. All methods are safe to call concurrently. */
export interface Store extends StoreLifecycle, FactStore, RegistryStore, KeyStore, LeaseStore, ResumeStore {}

// The records as they were imported before the split (memory/recall, the CLI, bench/ and others'
// work in flight still do); new code imports them from the port's own file.
export type {
  Actor,
  BeliefChange,
  BeliefQuery,
  CurrentBelief,
  ExportQuery,
  FactHead,
  FactHeadRequest,
  FactKey,
  FactQuery,
  FactReader,
  FactRef,
  FactWrite,
  FactWriteScope,
  Replaced,
  SearchHit,
  StoredEvent,
} from './fact-store.ts';
export type { KeyRecord } from './key-store.ts';
export type { AppendRegistryOptions, PredicateDef, RegistryVersion } from './registry-store.ts';
export type { StoreChange } from './store-lifecycle.ts';
