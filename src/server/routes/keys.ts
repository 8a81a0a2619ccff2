/**
 * @module
 * Key routes: mint (admin), list (admin, never secrets), revoke (admin), and whoami.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { reachesTenant } from '../../auth/auth-context.ts';
import type { KeyService } from '../../auth/key-service.ts';
import type { Clock } from '../../common/clock.ts';
import { forbidden, invalidRequest, notFound } from '../../common/errors.ts';
import type { KeyStore } from '../../store/key-store.ts';
import { iso } from '../schemas/common.ts';
import {
  createKeyBody,
  keyParams,
  listKeysAnswer,
  listKeysQuery,
  mintKeyAnswer,
  whoamiAnswer,
} from '../schemas/keys.ts';
import { keyJson, whoamiJson } from '../wire.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

export async function keyRoutes(app: FastifyInstance, opts: { keys: KeyService; store: KeyStore; clock: Clock }) {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get('/v1/whoami', { schema: { summary: 'What this key is', response: { 200: whoamiAnswer } } }, async (req) =>
    whoamiJson(req.auth),
  );

  const mint = { summary: 'Mint a key (admin); the answer is the only time the key is shown' };
  r.post(
    '/v1/keys',
    { config: { admin: true }, schema: { ...mint, body: createKeyBody, response: { 201: mintKeyAnswer } } },
    async (req, reply) => {
      const body = req.body;
      if (body.tenant === '*' ? req.auth.tenant !== '*' : !reachesTenant(req.auth, body.tenant)) {
        throw forbidden(`an admin key of tenant '${req.auth.tenant}' cannot mint keys for tenant '${body.tenant}'`);
      }
      if (body.tenant === '*' && body.agent) throw forbidden("agent keys need a real tenant, not '*'");
      const expiresAt = body.ttl_seconds ? opts.clock.now() + body.ttl_seconds * 1000 : null;
      const { key, record } = await opts.keys.mint({
        tenant: body.tenant,
        agent: body.agent ?? null,
        note: body.note ?? null,
        expiresAt,
      });
      reply.status(201);
      return {
        id: record.id,
        key,
        tenant: record.tenant,
        agent: record.agent,
        namespace: record.agent === null ? null : `${record.tenant}:${record.agent}`,
        expires_at: iso(record.expiresAt),
      };
    },
  );

  const list = { summary: 'List keys (admin; never secrets), in creation order, a page at a time' };
  r.get(
    '/v1/keys',
    { config: { admin: true }, schema: { ...list, querystring: listKeysQuery, response: { 200: listKeysAnswer } } },
    async (req) => {
      const q = req.query;
      const now = opts.clock.now();
      const all = await opts.store.listKeys(req.auth.tenant);
      // The cursor is looked up before expired keys are hidden, so one that expired since the last
      // page still marks its place. Key ids are random, so an unknown one has no place at all: an
      // empty page would read as the end of the listing, and starting over would repeat it.
      let from = 0;
      if (q.after !== undefined) {
        const at = all.findIndex((k) => k.id === q.after);
        if (at < 0) throw invalidRequest('after', `no key ${q.after} in this listing; list again without after`);
        from = at + 1;
      }
      const rest = all
        .slice(from)
        .filter((k) => q.include_expired === 'true' || k.expiresAt === null || k.expiresAt > now);
      const page = rest.slice(0, q.limit ?? 100);
      const more = page.length < rest.length;
      return { keys: page.map(keyJson), next: more ? (page[page.length - 1]?.id ?? null) : null };
    },
  );

  const revoked = z.null().describe('Revoked: later use of the key is refused with 401 key_revoked');
  const revoke = { summary: 'Revoke a key (admin)', params: keyParams, response: { 204: revoked } };
  r.delete('/v1/keys/:id', { config: { admin: true }, schema: revoke }, async (req, reply) => {
    const { id } = req.params;
    const record = await opts.store.getKey(id);
    if (!record || !reachesTenant(req.auth, record.tenant)) throw notFound(`key ${id}`);
    await opts.keys.revoke(id);
    return reply.status(204).send(null);
  });
}
