/**
 * @module
 * Gives every request of a server a ticket of `common/light-first.ts` from its first hook to its
 * answer, so heavy work (time-sliced loops, a big remember's later parts) lets the light requests in
 * flight go first. The hook is installed before every other `onRequest` hook and runs the rest of the
 * request in the ticket's async context, so a time slice spent anywhere in it marks it heavy.
 */
import type { FastifyInstance } from 'fastify';
import { admit, release, runAs } from '../common/light-first.ts';

/** Installs the light-lane hook on `app`: call before any other `onRequest` hook is added. */
export function installLightLane(app: FastifyInstance): void {
  app.addHook('onRequest', (_req, reply, next) => {
    const ticket = admit();
    // The response's close ends every request: answered, hijacked (MCP) or its client gone.
    reply.raw.once('close', () => release(ticket));
    runAs(ticket, next);
  });
}
