/**
 * @module
 * Key routes: mint (admin), list (admin, never secrets), revoke (admin), and whoami.
 */
import type { FastifyInstance } from 'fastify';
import { reachesTenant, requireAdmin } from '../../auth/auth-context.ts';
import type { KeyService } from '../../auth/key-service.ts';
import type { Clock } from '../../common/clock.ts';
import { forbidden, notFound } from '../../common/errors.ts';
import type { Store } from '../../store/store.ts';
import { iso } from '../schemas/common.ts';
import { createKeyBody, keyParams, listKeysQuery } from '../schemas/keys.ts';
import { parseWith } from '../validate.ts';
import { keyJson, whoamiJson } from '../wire.ts';

export async function keyRoutes(app: FastifyInstance, opts: { keys: KeyService; store: Store; clock: Clock }) {
  app.get('/v1/whoami', async (req) => whoamiJson(req.auth));

  app.post('/v1/keys', async (req, reply) => {
    requireAdmin(req.auth);
    const body = parseWith(createKeyBody, req.body);
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
  });

  app.get('/v1/keys', async (req) => {
    requireAdmin(req.auth);
    const q = parseWith(listKeysQuery, req.query, 'query');
    const now = opts.clock.now();
    const all = (await opts.store.listKeys(req.auth.tenant)).filter(
      (k) => q.include_expired === 'true' || k.expiresAt === null || k.expiresAt > now,
    );
    const from = q.after === undefined ? 0 : all.findIndex((k) => k.id === q.after) + 1;
    const page = all.slice(from, from + (q.limit ?? 100));
    const more = from + page.length < all.length;
    return { keys: page.map(keyJson), next: more ? (page[page.length - 1]?.id ?? null) : null };
  });

  app.delete('/v1/keys/:id', async (req, reply) => {
    requireAdmin(req.auth);
    const { id } = parseWith(keyParams, req.params, 'id');
    const record = await opts.store.getKey(id);
    if (!record || !reachesTenant(req.auth, record.tenant)) throw notFound(`key ${id}`);
    await opts.keys.revoke(id);
    return reply.status(204).send();
  });
}
