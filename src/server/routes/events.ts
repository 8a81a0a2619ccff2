/**
 * @module
 * Export (NDJSON, streamed page by page), import (admin; identical history, ids included) and purge
 * (admin; the one hard delete). Import is validated whole before anything is written.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { parseNamespace, reachesTenant, requireAdmin, resolveNamespace } from '../../auth/auth-context.ts';
import { invalidRequest, namespaceMismatch } from '../../common/errors.ts';
import type { MemoryEngine } from '../../memory/engine.ts';
import type { ExportQuery, Store, StoredEvent } from '../../store/store.ts';
import { eventLine, exportQuery, namespaceParams } from '../schemas/events.ts';
import { parseWith } from '../validate.ts';
import { eventJson } from '../wire.ts';

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

  app.addContentTypeParser(['application/x-ndjson', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });

  app.get('/v1/events', async (req, reply) => {
    const q = parseWith(exportQuery, req.query, 'query');
    let scope: Omit<ExportQuery, 'limit'>;
    if (req.auth.namespace !== null || q.namespace !== undefined) {
      scope = { namespace: resolveNamespace(req.auth, q.namespace) };
    } else {
      scope = req.auth.tenant === '*' ? {} : { tenant: req.auth.tenant };
    }
    reply.type('application/x-ndjson');
    return reply.send(Readable.from(exportLines(store, { ...scope, since: q.since })));
  });

  app.post('/v1/events/import', async (req) => {
    requireAdmin(req.auth);
    if (typeof req.body !== 'string') {
      throw invalidRequest('body', 'send NDJSON (one event per line) with Content-Type: application/x-ndjson');
    }
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

  app.delete('/v1/namespaces/:ns', async (req) => {
    requireAdmin(req.auth);
    const { ns } = parseWith(namespaceParams, req.params, 'ns');
    const { tenant } = parseNamespace(ns, 'ns');
    if (!reachesTenant(req.auth, tenant)) throw namespaceMismatch(`${req.auth.tenant}:*`, ns);
    const erased = await opts.engine.purgeNamespace(ns);
    opts.onPurge?.(ns);
    return { namespace: ns, erased };
  });
}
