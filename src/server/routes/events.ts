/**
 * @module
 * Export (NDJSON, streamed page by page, each tenant's registry versions before its first event, the
 * resume records after the events; the pages' lines built in a read worker where the store can),
 * import (admin; identical history, ids and actors kept, every line checked as a write would be,
 * nothing stored of a refused request) and purge (admin; the one hard delete).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { parseNamespace, reachesTenant, resolveNamespace } from '../../auth/auth-context.ts';
import type { Clock } from '../../common/clock.ts';
import { namespaceMismatch } from '../../common/errors.ts';
import { leaveLightLane, type Ticket } from '../../common/light-first.ts';
import { TimeSlice } from '../../common/time-slice.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import type { RegistryBook } from '../../memory/registry-book.ts';
import { DEFAULT_TURN_TOKEN_LIMIT } from '../../memory/resume/records.ts';
import type { ExportPageBytes } from '../../store/answer-text-port.ts';
import type { ExportQuery, FactStore, StoredEvent } from '../../store/fact-store.ts';
import type { RegistryStore } from '../../store/registry-store.ts';
import type { ResumeStore } from '../../store/resume-store.ts';
import { ImportWorker } from '../import-off-loop.ts';
import { runImport } from '../import-run.ts';
import type { RequestLimits } from '../rate-limits.ts';
import {
  exportAnswer,
  exportQuery,
  importAnswer,
  importBody,
  namespaceParams,
  purgeAnswer,
} from '../schemas/events.ts';
import { resumeRecordJson } from '../schemas/resume-lines.ts';
import { eventJson, registryVersionJson } from '../wire.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

const NDJSON = 'application/x-ndjson';

const PAGE = 1000;

/** What an export reads and an import writes besides the engine: events, registry versions, resume records. */
type BackupStore = FactStore & RegistryStore & ResumeStore;

/**
 * Event lines page by page from `first` (the first page, read before the answer starts so that a
 * refused `since` is a 400, not a cut stream); before a tenant's first event, its registry versions
 * (an import restores them).
 */
async function* exportLines(
  store: BackupStore,
  query: Omit<ExportQuery, 'limit'>,
  first: StoredEvent[] | ExportPageBytes,
  lane: Ticket | null,
): AsyncGenerator<string | Buffer> {
  if (Array.isArray(first)) yield* eventExportLines(store, query, first, lane);
  else yield* builtExportLines(store, query, first, lane);
  // The resume records follow the events (whole, so not in an incremental export from `since`).
  if (query.since !== undefined) return;
  let lines: string[] = [];
  for await (const line of store.exportResume({ namespace: query.namespace, tenant: query.tenant })) {
    lines.push(JSON.stringify(resumeRecordJson(line)));
    if (lines.length >= 100) {
      yield `${lines.join('\n')}\n`;
      lines = [];
    }
  }
  if (lines.length > 0) yield `${lines.join('\n')}\n`;
}

async function* eventExportLines(
  store: BackupStore,
  query: Omit<ExportQuery, 'limit'>,
  first: StoredEvent[],
  lane: Ticket | null,
  tenants = new Set<string>(),
): AsyncGenerator<string> {
  const slice = new TimeSlice(lane);
  let page = first;
  for (;;) {
    if (page.length === 0) return;
    const lines: string[] = [];
    for (const e of page) {
      // A page is 1,000 events: the event loop turns every few ms while they are written out.
      if (slice.due()) await slice.yield();
      if (!tenants.has(e.tenant)) {
        tenants.add(e.tenant);
        for (const v of await store.registryVersions(e.tenant)) lines.push(JSON.stringify(registryVersionJson(v)));
      }
      lines.push(JSON.stringify(eventJson(e)));
    }
    yield `${lines.join('\n')}\n`;
    if (page.length < PAGE) return;
    // The last event is the cursor: in the store's export order nothing can come behind it later.
    page = await store.exportEvents({ ...query, since: (page[page.length - 1] as StoredEvent).id, limit: PAGE });
  }
}

/**
 * `eventExportLines` from pages whose lines a read worker built (`RenderedReads.exportPage`): the loop
 * only cuts each page's bytes where a tenant first appears, to put its registry versions there.
 */
async function* builtExportLines(
  store: BackupStore,
  query: Omit<ExportQuery, 'limit'>,
  first: ExportPageBytes,
  lane: Ticket | null,
): AsyncGenerator<string | Buffer> {
  const rendered = store.renderedReads?.();
  const tenants = new Set<string>();
  for (let page = first; ; ) {
    const body = Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength);
    let from = 0;
    for (const { tenant, at } of page.tenantStarts) {
      if (tenants.has(tenant)) continue;
      tenants.add(tenant);
      const versions = await store.registryVersions(tenant);
      if (versions.length === 0) continue;
      if (at > from) yield body.subarray(from, at);
      from = at;
      yield `${versions.map((v) => JSON.stringify(registryVersionJson(v))).join('\n')}\n`;
    }
    if (body.length > from) yield body.subarray(from);
    if (page.count < PAGE || page.lastId === null) return;
    // The workers stopped (the store closes): the rest of the pages as objects, in the same order.
    if (!rendered || !store.renderedReads?.()) {
      const rest = await store.exportEvents({ ...query, since: page.lastId, limit: PAGE });
      yield* eventExportLines(store, query, rest, lane, tenants);
      return;
    }
    page = await rendered.exportPage({ ...query, since: page.lastId, limit: PAGE });
  }
}

export async function eventRoutes(
  app: FastifyInstance,
  opts: {
    store: BackupStore;
    engine: MemoryEngine;
    registries: RegistryBook;
    clock: Clock;
    limits?: RequestLimits;
    /** The resume records' turn token limit, for imported turns. @default DEFAULT_TURN_TOKEN_LIMIT */
    turnTokenLimit?: number;
    /** Import bodies of this many characters or more are parsed on a worker thread. @default OFF_LOOP_IMPORT_BYTES */
    importOffLoopBytes?: number;
  },
) {
  const { store } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  app.addContentTypeParser(['application/x-ndjson', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });

  const exported = { description: 'NDJSON, one event per line', content: { [NDJSON]: { schema: exportAnswer } } };
  const exportSchema = { summary: 'Export events as NDJSON', querystring: exportQuery, response: { 200: exported } };
  r.get('/v1/events', { schema: exportSchema }, async (req, reply) => {
    const q = req.query;
    let scope: Omit<ExportQuery, 'limit'>;
    if (req.auth.namespace !== null || q.namespace !== undefined) {
      scope = { namespace: resolveNamespace(req.auth, q.namespace) };
    } else {
      scope = req.auth.tenant === '*' ? {} : { tenant: req.auth.tenant };
    }
    const query = { ...scope, since: q.since };
    // Built as bytes in a read worker when the store can (SQLite), else mapped here page by page.
    const rendered = store.renderedReads?.();
    const first = rendered
      ? await rendered.exportPage({ ...query, limit: PAGE })
      : await store.exportEvents({ ...query, limit: PAGE });
    reply.type('application/x-ndjson');
    // A stream, not the documented string: NDJSON goes out page by page.
    return reply.send(Readable.from(exportLines(store, query, first, req.lane)) as unknown as string);
  });

  const importSchema = {
    summary: 'Import NDJSON events (admin; identical history, ids included)',
    consumes: [NDJSON],
    body: importBody,
    response: { 200: importAnswer },
  };
  // Its own lane of the body budget: a 1 MiB body over the shared budget would otherwise run alone,
  // every other tenant's write waiting for the whole import (issue 21).
  const importConfig = { admin: true, bodyBudget: 'alone' as const };
  const importWorker = new ImportWorker();
  app.addHook('onClose', () => importWorker.close());
  const importDeps = {
    ...opts,
    worker: importWorker,
    turnTokenLimit: opts.turnTokenLimit ?? DEFAULT_TURN_TOKEN_LIMIT,
    offLoopBytes: opts.importOffLoopBytes,
  };
  r.post('/v1/events/import', { config: importConfig, schema: importSchema }, async (req) => {
    const r = await runImport(importDeps, req.body, req.auth);
    return {
      imported: r.imported,
      skipped: r.skipped,
      registry_versions: r.registryVersions,
      resume_records: r.resumeRecords,
    };
  });

  const purgeSchema = {
    summary: 'Purge a namespace for good (admin): no byte of its records is left',
    params: namespaceParams,
    response: { 200: purgeAnswer },
  };
  r.delete('/v1/namespaces/:ns', { config: { admin: true }, schema: purgeSchema }, async (req) => {
    const { ns } = req.params;
    const { tenant } = parseNamespace(ns, 'ns');
    if (!reachesTenant(req.auth, tenant)) throw namespaceMismatch(`${req.auth.tenant}:*`, ns);
    opts.limits?.takePurge(req.auth);
    leaveLightLane(req.lane); // a purge is heavy whatever its size: its steps must not wait for it
    const erased = await opts.engine.purgeNamespace(ns);
    return { namespace: ns, erased };
  });
}
