/**
 * @module
 * The auth plugin: reads `Authorization: Bearer <key>`, verifies it, and sets `req.auth` — the only
 * decorator of the server. Routes marked `config: { public: true }` skip it; `config: { admin: true }`
 * routes refuse an agent key here, before the body is read.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type AuthContext, requireAdmin } from '../auth/auth-context.ts';
import type { KeyService } from '../auth/key-service.ts';
import { unauthenticated } from '../common/errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified caller (set for every non-public route). */
    auth: AuthContext;
  }
  interface FastifyContextConfig {
    /** No key needed. */
    public?: boolean;
    /** An admin key needed: an agent key is refused (403) before the body is validated. */
    admin?: boolean;
  }
}

/** The bearer key of a request, or throws 401. */
export function bearerOf(req: FastifyRequest): string {
  const header = req.headers.authorization;
  if (!header) throw unauthenticated('missing Authorization: Bearer <key>');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('Authorization must be "Bearer <key>"');
  return m[1] as string;
}

/** Registers the auth hook. */
export const authPlugin = fp(
  async function authPlugin(
    app: FastifyInstance,
    opts: { keys: KeyService; verify?: (key: string) => Promise<AuthContext> },
  ) {
    const verify = opts.verify ?? ((key: string) => opts.keys.verify(key));
    app.decorateRequest('auth', null as unknown as AuthContext);
    // onRequest: a caller without a valid key is refused before its body is read or parsed.
    app.addHook('onRequest', async function authenticate(req) {
      if (req.routeOptions.config?.public || req.is404) return;
      const auth = await verify(bearerOf(req));
      // The context carries this request's ticket: the key service makes one per call; another verify
      // (a test's, a plugin's) may hand out a shared one, which is copied instead.
      if (opts.verify) req.auth = { ...auth, lane: req.lane };
      else {
        auth.lane = req.lane;
        req.auth = auth;
      }
      if (req.routeOptions.config?.admin) requireAdmin(req.auth);
    });
  },
  { name: 'tether-auth' },
);
