/**
 * @module
 * `POST /v1/auth/kubernetes {token}`: exchanges a workload token for a short-lived agent key
 * (tenant = pod namespace, agent = SandboxClaim, session = pod). The key never outlives the token.
 * Rate limited per source address before the API server is asked, and per pod after.
 */
import type { FastifyInstance } from 'fastify';
import type { WorkloadExchanger, WorkloadIdentity } from '../../auth/exchange/types.ts';
import { type KeyService, workloadKeyNote } from '../../auth/key-service.ts';
import type { RateLimiter } from '../../auth/rate-limiter.ts';
import type { Clock } from '../../common/clock.ts';
import { isTetherError, TetherError } from '../../common/errors.ts';
import type { MemoryMetrics } from '../metrics.ts';
import { iso } from '../schemas/common.ts';
import { exchangeAnswer, kubernetesAuthBody } from '../schemas/keys.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

/** Options for the exchange route. */
export interface KubernetesAuthOptions {
  exchanger: WorkloadExchanger;
  keys: KeyService;
  clock: Clock;
  metrics: MemoryMetrics;
  /** Life of a minted key, ms. @default 900000 (15 min) */
  keyTtlMs: number;
  /** Limits exchanges per pod (uid). */
  perPod: RateLimiter;
  /** Limits exchanges per source address. */
  perAddress: RateLimiter;
  /** Called before a key is minted for a claim, e.g. to watch its namespace so the key ends with the claim. */
  beforeMint?: (identity: WorkloadIdentity) => void;
}

function rateLimited(seconds: number, who: string): TetherError {
  return new TetherError('rate_limited', `too many token exchanges from this ${who}; retry in ${seconds} s`, {
    retryAfter: seconds,
  });
}

export async function kubernetesAuthRoutes(app: FastifyInstance, opts: KubernetesAuthOptions): Promise<void> {
  const schema = {
    summary: 'Exchange a workload token (projected service-account token) for a short-lived key',
    body: kubernetesAuthBody,
    response: { 200: exchangeAnswer },
  };
  app
    .withTypeProvider<ZodTypeProvider>()
    .post('/v1/auth/kubernetes', { config: { public: true }, schema }, async (req) => {
      try {
        const body = req.body;
        const addrWait = opts.perAddress.take(`addr:${req.ip}`);
        if (addrWait > 0) throw rateLimited(addrWait, 'address');
        const id = await opts.exchanger.exchange(body.token);
        const podWait = opts.perPod.take(`pod:${id.podUid}`);
        if (podWait > 0) throw rateLimited(podWait, 'pod');
        opts.beforeMint?.(id);
        const now = opts.clock.now();
        const expiresAt = Math.min(now + opts.keyTtlMs, id.tokenExpiresAt ?? Number.POSITIVE_INFINITY);
        const { key } = await opts.keys.mint({
          tenant: id.tenant,
          agent: id.agent,
          session: id.session,
          expiresAt,
          note: workloadKeyNote(id.tenant, id.serviceAccount, id.session, id.claimUid),
        });
        opts.metrics.exchanges.inc({ outcome: 'ok' });
        req.log.info({ tenant: id.tenant, agent: id.agent, session: id.session }, 'workload key minted');
        return {
          key,
          expires_at: iso(expiresAt),
          tenant: id.tenant,
          agent: id.agent,
          session: id.session,
          namespace: `${id.tenant}:${id.agent}`,
        };
      } catch (err) {
        opts.metrics.exchanges.inc({ outcome: isTetherError(err) ? err.code : 'internal' });
        throw err;
      }
    });
}
