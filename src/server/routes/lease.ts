/**
 * @module
 * `POST /v1/resume` (the lease unless deferred, and the briefing) and the lease routes: acquire
 * (409 `lease_held`), renew and release (409 `lease_lost` / `lease_not_held`), and `GET /v1/lease`
 * (who holds it; the console reads it). Each declares its schemas and calls the resume call.
 */
import type { FastifyInstance } from 'fastify';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import {
  acquireBody,
  leaseAnswer,
  namespaceQuery,
  releaseBody,
  renewBody,
  resumeAnswer,
  resumeBody,
} from '../schemas/resume.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

export async function leaseRoutes(app: FastifyInstance, opts: { calls: ResumeCalls }): Promise<void> {
  const { calls } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v1/resume',
    {
      schema: {
        summary: 'Resume: take the lease (unless defer) and get the records and a briefing within a token budget',
        body: resumeBody,
        response: { 200: resumeAnswer },
      },
    },
    async (req) => calls.resume(req.auth, req.body),
  );
  r.get(
    '/v1/lease',
    { schema: { summary: 'Who holds the lease now', querystring: namespaceQuery, response: { 200: leaseAnswer } } },
    async (req) => calls.lease(req.auth, req.query),
  );
  r.post(
    '/v1/lease/acquire',
    {
      schema: {
        summary: 'Take the lease (409 lease_held while another is live)',
        body: acquireBody,
        response: { 200: leaseAnswer },
      },
    },
    async (req) => calls.acquire(req.auth, req.body),
  );
  r.post(
    '/v1/lease/renew',
    { schema: { summary: 'Extend the live lease of an epoch', body: renewBody, response: { 200: leaseAnswer } } },
    async (req) => calls.renew(req.auth, req.body),
  );
  r.post(
    '/v1/lease/release',
    { schema: { summary: 'End the live lease of an epoch', body: releaseBody, response: { 200: leaseAnswer } } },
    async (req) => calls.release(req.auth, req.body),
  );
}
