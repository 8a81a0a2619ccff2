/**
 * @module
 * `POST /v1/resume` (the lease unless deferred, and the briefing) and the lease routes: acquire
 * (409 `lease_held`), renew and release (409 `lease_lost` / `lease_not_held`), and `GET /v1/lease`
 * (who holds it; the console reads it). Thin: parse -> the resume call the MCP tools call too.
 */
import type { FastifyInstance } from 'fastify';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import { acquireBody, namespaceQuery, releaseBody, renewBody, resumeBody } from '../schemas/resume.ts';
import { parseWith } from '../validate.ts';

export async function leaseRoutes(app: FastifyInstance, opts: { calls: ResumeCalls }): Promise<void> {
  const { calls } = opts;
  app.post('/v1/resume', async (req) => calls.resume(req.auth, parseWith(resumeBody, req.body)));
  app.get('/v1/lease', async (req) => calls.lease(req.auth, parseWith(namespaceQuery, req.query, 'query')));
  app.post('/v1/lease/acquire', async (req) => calls.acquire(req.auth, parseWith(acquireBody, req.body)));
  app.post('/v1/lease/renew', async (req) => calls.renew(req.auth, parseWith(renewBody, req.body)));
  app.post('/v1/lease/release', async (req) => calls.release(req.auth, parseWith(releaseBody, req.body)));
}
