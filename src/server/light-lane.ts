/**
 * @module
 * Gives every request of a server a ticket of `common/light-first.ts` from its first hook to its
 * answer, so heavy work (time-sliced loops, a big remember's later parts) lets the light requests in
 * flight go first. The hook is installed before every other `onRequest` hook and runs the rest of the
 * request in the ticket's async context, so a time slice spent anywhere in it marks it heavy.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { admit, release, runAs, type Ticket } from '../common/light-first.ts';

/** Installs the light-lane hooks on `app`: call before any other `onRequest` hook is added. */
export function installLightLane(app: FastifyInstance): void {
  const tickets = new WeakMap<FastifyRequest, Ticket>();
  const done = (req: FastifyRequest) => {
    const ticket = tickets.get(req);
    if (ticket) release(ticket);
  };
  app.addHook('onRequest', (req, reply, next) => {
    const ticket = admit();
    tickets.set(req, ticket);
    // Hijacked answers (MCP) skip onResponse; the socket's close ends every request.
    reply.raw.once('close', () => release(ticket));
    runAs(ticket, next);
  });
  app.addHook('onResponse', async (req) => done(req));
  app.addHook('onRequestAbort', async (req) => done(req));
}
