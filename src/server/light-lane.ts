/**
 * @module
 * Gives every request of a server a ticket of `common/light-first.ts` from its first hook to its
 * answer, so heavy work (time-sliced loops, a big remember's later parts) lets the light requests in
 * flight go first. The ticket is `req.lane`; the auth hook copies it into `req.auth`, so the calls
 * (HTTP and MCP) pass it on to the heavy work they start, which marks the request heavy at its first
 * slice. Install it before any other `onRequest` hook.
 */
import type { FastifyInstance } from 'fastify';
import { admit, release, type Ticket } from '../common/light-first.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's light-lane ticket (null only before the light-lane hook ran). */
    lane: Ticket | null;
  }
}

/** Installs the light-lane hook on `app`: call before any other `onRequest` hook is added. */
export function installLightLane(app: FastifyInstance): void {
  app.decorateRequest('lane', null);
  app.addHook('onRequest', (req, reply, next) => {
    const ticket = admit();
    req.lane = ticket;
    // The response's close ends every request: answered, hijacked (MCP) or its client gone.
    reply.raw.once('close', () => release(ticket));
    next();
  });
}
