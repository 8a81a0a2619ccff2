/**
 * @module
 * Wire statement -> engine `Statement`, wire recall -> reader `RecallQuery`, and the write context
 * (namespace + actor) of a caller. Shared by the HTTP memory routes and the MCP tools, so both write the
 * same events and answer recalls alike.
 */
import type { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Statement, WriteContext } from '../memory/engine.ts';
import { tenantOf } from '../memory/namespace.ts';
import type { RecallQuery } from '../memory/recall.ts';
import type { statementSchema } from './schemas/memories.ts';

/** A parsed wire statement (snake_case, times already epoch ms). */
export type StatementBody = z.output<typeof statementSchema>;

/** The engine's view of a wire statement. */
export function toStatement(s: StatementBody): Statement {
  return {
    subject: s.subject,
    predicate: s.predicate,
    value: s.value,
    kind: s.kind ?? null,
    confidence: s.confidence,
    source: s.source ?? null,
    observedAt: s.observed_at,
    evidence: s.evidence ?? null,
  };
}

/** Where a caller's write goes and who it says made it ("which pod did the work"). */
export function writeContext(auth: AuthContext, namespace: string): WriteContext {
  return {
    namespace,
    actor: { tenant: tenantOf(namespace), agent: auth.agent, session: auth.session, keyId: auth.keyId },
    lane: auth.lane ?? null,
  };
}

/** A parsed wire recall (HTTP query or MCP arguments: times epoch ms, numbers parsed). */
export interface RecallBody {
  subject?: string;
  predicate?: string;
  q?: string;
  as_of?: number;
  limit?: number;
  min_confidence?: number;
  kind?: string;
}

/** Default and documented `limit` of a recall. */
const RECALL_LIMIT = 50;

/** The reader's view of a wire recall in `namespace`. */
export function toRecallQuery(namespace: string, r: RecallBody): RecallQuery {
  return {
    namespace,
    subject: r.subject,
    predicate: r.predicate,
    q: r.q,
    asOf: r.as_of,
    limit: r.limit ?? RECALL_LIMIT,
    minConfidence: r.min_confidence,
    kind: r.kind,
  };
}
