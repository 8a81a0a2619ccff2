/**
 * @module
 * Export (NDJSON, streamed page by page), import (admin; identical history, ids included) and purge
 * (admin; the one hard delete). Import is validated whole before anything is written.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { parseNamespace, reachesTenant, resolveNamespace } from '../../auth/auth-context.ts';
import { invalidRequest, namespaceMismatch } from '../../common/errors.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import type { ExportQuery, Store, StoredEvent } from '../../store/store.ts';
import {
  eventLine,
  exportAnswer,
  exportQuery,
  importAnswer,
  importBody,
  namespaceParams,
  purgeAnswer,
} from '../schemas/events.ts';
import { parseWith } from '../validate.ts';
import { eventJson } from '../wire.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

const NDJSON = 'application/x-ndjson';

const PAGE = 1000;

async function* exportLines(store: Store, query: Omit<ExportQuery, 'limit'>): AsyncGenerator<string> {
  let since = query.since;
  for (;;) {
    const page = await store.exportEvents({ ...query, since, limit: PAGE });
    if (page.length === 0) return;
    yield `${page.map((e) => JSON.stringify(eventJson(e))).join('\n')}\n`;
    since = (page[page.length - 1] as StoredEvent).id;
    if (page.length < PAGE) return;
  }
}

export async function eventRoutes(
  app: FastifyInstance,
  opts: { store: Store; engine: MemoryEngine; onPurge?: (ns: string) => void },
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
    reply.type('application/x-ndjson');
    // A stream, not the documented string: NDJSON goes out page by page.
    return reply.send(Readable.from(exportLines(store, { ...scope, since: q.since })) as unknown as string);
  });

  const importSchema = {
    summary: 'Import NDJSON events (admin; identical history, ids included)',
    consumes: [NDJSON],
    body: importBody,
    response: { 200: importAnswer },
  };
  r.post('/v1/events/import', { config: { admin: true }, schema: importSchema }, async (req) => {
    const events: StoredEvent[] = [];
    const lines = req.body.split('\n');
    for (const [i, raw] of lines.entries()) {
      const text = raw.trim();
      if (text === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw invalidRequest(`line ${i + 1}`, 'malformed JSON');
      }
      const line = parseWith(eventLine, json, `line ${i + 1}`, `line ${i + 1}.`);
      const { tenant } = parseNamespace(line.namespace, `line ${i + 1}.namespace`);
      if (!reachesTenant(req.auth, tenant)) throw namespaceMismatch(`${req.auth.tenant}:*`, line.namespace);
      if (line.actor.tenant !== tenant) {
        throw invalidRequest(`line ${i + 1}.actor.tenant`, 'must be the tenant of the namespace');
      }
      if (line.retraction === false && (line.value === null || line.value_key === null)) {
        throw invalidRequest(`line ${i + 1}.value`, 'an assertion needs a value');
      }
      events.push({
        id: line.id,
        namespace: line.namespace,
        tenant,
        subject: line.subject,
        predicate: line.predicate,
        value: line.value,
        valueKey: line.value_key,
        retraction: line.retraction,
        kind: line.kind,
        confidence: line.confidence,
        source: line.source,
        evidence: line.evidence,
        observedAt: line.observed_at,
        recordedAt: line.recorded_at,
        actor: { tenant, agent: line.actor.agent, session: line.actor.session, keyId: line.actor.key_id },
      });
    }
    const imported = await opts.engine.importEvents(events);
    return { imported, skipped: events.length - imported };
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
    const erased = await opts.engine.purgeNamespace(ns);
    opts.onPurge?.(ns);
    return { namespace: ns, erased };
  });
}
