/**
 * @module
 * The import worker's messages (`import-off-loop.ts`; loaded by `import-worker.ts`): an import's body
 * parsed, wire-checked and memory-checked on a thread of its own, and its events and resume records
 * handed back a chunk at a time as the event loop stores them; `drop` forgets them once the import
 * ends. The lines of a 1 MiB body (thousands of objects, kept until the last chunk is stored) so never
 * live on the event loop's heap, where each scavenge would copy them (bench:fairness). Answers
 * `{id, op, ...}` with `{id, result}` or `{id, error}` (a `TetherError`'s code, message and field).
 * Runs on the import worker's thread only.
 */
import { parentPort } from 'node:worker_threads';
import { isTetherError } from '../common/errors.ts';
import { checkImportedEvents, importTenants } from '../memory/backup-import.ts';
import { type ImportLines, parseImportLines } from './import-lines.ts';
import type { ImportWorkerReply, ImportWorkerRequest } from './import-off-loop.ts';

const port = parentPort;
if (!port) throw new Error('import-worker-loop.ts runs on a worker thread only');

let lines: ImportLines | null = null;

async function answer(msg: ImportWorkerRequest): Promise<unknown> {
  if (msg.op === 'parse') {
    lines = await parseImportLines(msg.body, msg.auth, msg.records);
    return {
      versions: lines.versions,
      tenants: importTenants(lines.versions, lines.events),
      events: lines.events.length,
      records: lines.records.length,
    };
  }
  if (msg.op === 'drop') {
    lines = null; // the body's items go with the import
    return null;
  }
  if (!lines) throw new Error(`'${msg.op}' before 'parse'`);
  if (msg.op === 'check') {
    await checkImportedEvents(msg.plans, lines.events, msg.now);
    return null;
  }
  if (msg.op === 'events') return lines.events.slice(msg.from, msg.from + msg.count).map((e) => e.event);
  return lines.records.slice(msg.from, msg.from + msg.count);
}

port.on('message', (msg: ImportWorkerRequest) => {
  answer(msg).then(
    (result) => port.postMessage({ id: msg.id, result } satisfies ImportWorkerReply),
    (err: unknown) => {
      const error = isTetherError(err)
        ? { code: err.code, message: err.message, field: err.field }
        : { code: 'internal' as const, message: String((err as Error)?.message ?? err) };
      port.postMessage({ id: msg.id, error } satisfies ImportWorkerReply);
    },
  );
});
