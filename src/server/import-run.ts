/**
 * @module
 * One import request, from its NDJSON body to what it stored: every line checked before anything is
 * stored (wire checks, `import-lines.ts`; registry and event checks, `memory/backup-import.ts`), then
 * the events and the resume records stored in chunks of about `SLICE_MS` each. A body of
 * `offLoopBytes` or more is parsed and checked on a worker thread (`import-off-loop.ts`), a smaller one
 * on the event loop in slices; both give the same answer and the same errors. Used by the import route.
 */
import { performance } from 'node:perf_hooks';
import type { AuthContext } from '../auth/auth-context.ts';
import { ChunkSizer } from '../common/chunk-sizer.ts';
import type { Clock } from '../common/clock.ts';
import { leaveLightLane } from '../common/light-first.ts';
import { SLICE_MS } from '../common/time-slice.ts';
import {
  arraySource,
  IMPORT_CHUNK,
  type ImportSource,
  importBackup,
  planImport,
  storeImport,
  storeInChunks,
} from '../memory/backup-import.ts';
import type { MemoryEngine } from '../memory/engine.ts';
import type { RegistryBook } from '../memory/registry-book.ts';
import type { ResumeStore } from '../store/resume-store.ts';
import type { ResumeRecordLine } from '../store/resume-types.ts';
import { parseImportLines } from './import-lines.ts';
import { type ImportWorker, OFF_LOOP_IMPORT_BYTES } from './import-off-loop.ts';

/** What an import stored (the route's answer, in the store's words). */
export interface ImportRun {
  imported: number;
  skipped: number;
  registryVersions: number;
  resumeRecords: number;
}

/** What an import reads and writes through. */
export interface ImportDeps {
  store: Pick<ResumeStore, 'importResume'>;
  engine: Pick<MemoryEngine, 'importEvents'>;
  registries: RegistryBook;
  clock: Clock;
  /** The resume records' turn token limit, for imported turns. */
  turnTokenLimit: number;
  /** Where bodies of `offLoopBytes` or more are parsed. */
  worker: ImportWorker;
  /** Bodies of this many characters or more are parsed on the worker. @default OFF_LOOP_IMPORT_BYTES */
  offLoopBytes?: number;
}

/**
 * Resume records are plain rows (no registry to check): stored after the events, repeats skipped, in
 * chunks (one transaction each, sized to about SLICE_MS) so other tenants' writes go on between them.
 */
function storeRecords(store: ImportDeps['store'], records: ImportSource<ResumeRecordLine>): Promise<number> {
  const sizer = new ChunkSizer({ max: IMPORT_CHUNK, budgetMs: SLICE_MS });
  return storeInChunks(records, sizer, async (part, took) => {
    const started = performance.now();
    const stored = await store.importResume(part);
    took(performance.now() - started);
    return stored;
  });
}

/**
 * Checks then stores the import `body` sent with `auth`.
 * @throws {TetherError} 400/403 naming the line and field of the first refused item; nothing is stored then
 */
export async function runImport(deps: ImportDeps, body: string, auth: AuthContext): Promise<ImportRun> {
  // Heavy from the start: its chunks must not wait for the request itself (`common/light-first.ts`).
  leaveLightLane(auth.lane);
  const records = { now: deps.clock.now(), turnTokenLimit: deps.turnTokenLimit };
  if (body.length < (deps.offLoopBytes ?? OFF_LOOP_IMPORT_BYTES)) {
    const lines = await parseImportLines(body, auth, records);
    const r = await importBackup(deps, lines);
    return { ...r, resumeRecords: await storeRecords(deps.store, arraySource(lines.records)) };
  }
  return deps.worker.run(body, auth, records, async (parsed) => {
    const plans = await planImport(deps.registries, parsed.versions, parsed.tenants);
    await parsed.check(plans, deps.clock.now());
    const r = await storeImport(deps, plans, parsed.events);
    return { ...r, resumeRecords: await storeRecords(deps.store, parsed.records) };
  });
}
