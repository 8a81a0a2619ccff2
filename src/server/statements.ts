/**
 * @module
 * Wire statement -> engine `Statement`, and the write context (namespace + actor) of a caller.
 * Shared by the HTTP memory routes and the MCP tools, so both write the same events.
 */
import type { z } from 'zod';
import type { AuthContext } from '../auth/auth-context.ts';
import type { Statement, WriteContext } from '../memory/engine.ts';
import { tenantOf } from '../memory/namespace.ts';
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
  };
}
