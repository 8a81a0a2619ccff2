/**
 * @module
 * The stable agent/claim name of a session: `<service>-<first 10 hex of sha256(key)>`.
 * The same session key always gets the same name, across instances and gateway restarts,
 * so a later identity issue can give a returning session its memory back. Used by the gateway scheduler.
 */
import { createHash } from 'node:crypto';

/**
 * Derives the claim name of a session.
 * @param service the Knative service name
 * @param key the session key (cookie value)
 * @returns e.g. `ai-agent-pause-3f1c0a9b2e`
 */
export function claimName(service: string, key: string): string {
  return `${service}-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
}
