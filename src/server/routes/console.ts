/**
 * @module
 * The web console on the memory server: its static files under `/console/` (no key: they hold no
 * data), `/console/config.json`, and — under `tether up` — a pass-through to the gateway admin API
 * (`/console/gateway/_tether/...`), so the page talks to one origin. Only the calls the console makes pass
 * (console-gateway-paths.ts: an allow-list on the raw path); the gateway still checks its own admin token
 * on every call, so this route adds no access of its own.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_HEADERS, type ConsoleAsset, consoleAsset, consoleConfigAsset } from '../../common/console-assets.ts';
import { notFound, unavailable } from '../../common/errors.ts';
import { consoleGatewayTarget } from './console-gateway-paths.ts';

/** Options of `consoleRoutes`. */
export interface ConsoleRoutesOptions {
  /** The gateway admin URL once it is known (`tether up`), else undefined: the console shows memory only. */
  gatewayAdminUrl?: () => string | undefined;
}

const GATEWAY_PREFIX = '/console/gateway';
/**
 * Longest wait for the gateway admin API's answer, then 503. Long: a DELETE of an instance answers once the
 * instance stopped, which takes its grace period (5 s by default) and more on a loaded machine (5 s gave 503s).
 */
const GATEWAY_ANSWER_MS = 60_000;

function send(reply: FastifyReply, asset: ConsoleAsset) {
  return reply.headers(CONSOLE_HEADERS).type(asset.type).send(asset.body);
}

export async function consoleRoutes(app: FastifyInstance, opts: ConsoleRoutesOptions): Promise<void> {
  // Public (no key: the files hold no data) and hidden from OpenAPI (they are not the API).
  const pub = { config: { public: true }, schema: { hide: true } };
  app.get('/console', pub, async (_req, reply) => reply.redirect('/console/'));
  app.get('/console/config.json', pub, async (_req, reply) =>
    send(reply, consoleConfigAsset({ memory: '', gateway: opts.gatewayAdminUrl?.() ? GATEWAY_PREFIX : null })),
  );
  const passThrough = async (req: FastifyRequest, reply: FastifyReply) => {
    const admin = opts.gatewayAdminUrl?.();
    if (!admin) throw notFound(`path ${req.url.split('?')[0]}`);
    const target = consoleGatewayTarget(req.method, req.url.slice(GATEWAY_PREFIX.length));
    if (typeof target !== 'string') throw target;
    const headers: Record<string, string> = {};
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    let res: Response;
    try {
      // Appended, never resolved: the target is checked to hold no dot segment (console-gateway-paths.ts).
      res = await fetch(`${admin}${target}`, {
        method: req.method,
        headers,
        signal: AbortSignal.timeout(GATEWAY_ANSWER_MS),
      });
    } catch {
      throw unavailable('the gateway admin API does not answer', 2);
    }
    const body = Buffer.from(await res.arrayBuffer());
    return reply
      .status(res.status)
      .type(res.headers.get('content-type') ?? 'application/json')
      .send(body);
  };
  app.get(`${GATEWAY_PREFIX}/_tether/*`, pub, passThrough);
  app.delete(`${GATEWAY_PREFIX}/_tether/*`, pub, passThrough);
  app.get('/console/*', pub, async (req, reply) => {
    const asset = consoleAsset(req.url.split('?')[0] as string);
    if (!asset) throw notFound(`path ${req.url.split('?')[0]}`);
    return send(reply, asset);
  });
}
