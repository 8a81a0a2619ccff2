/**
 * @module
 * The stable agent/claim name of a session: `<service>-<32 hex of HMAC-SHA256(secret, service, key)>`.
 * The same session key always gets the same name, across instances and gateway restarts (the secret is
 * kept per deployment), so a returning session gets its memory back; without the secret nobody can
 * precompute a name or find two keys sharing one (128 bits). Built by the gateway core, used by session-table.ts.
 */
import { createHmac } from 'node:crypto';

/** Longest name: a DNS-1123 label (what Kubernetes allows for most object names, SandboxClaim included). */
export const MAX_CLAIM_NAME = 63;
/** Hex digits of the HMAC kept: 128 bits. */
const HASH_HEX = 32;
/** Longest service part, so that `<service>-<hash>` fits `MAX_CLAIM_NAME`. */
const MAX_SERVICE_PART = MAX_CLAIM_NAME - 1 - HASH_HEX;
/** The shortest secret accepted (bytes): 128 bits. */
export const MIN_SECRET_BYTES = 16;

/** Names a session's agent/claim from its service and session key. */
export type ClaimNamer = (service: string, key: string) => string;

/**
 * A claim namer keyed with a per-deployment `secret`.
 * @param secret at least 16 bytes (a string counts its UTF-8 bytes)
 * @throws {Error} when the secret is shorter
 * @example
 * ```ts
 * const name = claimNamer(secret)('ai-agent-pause', '11'); // 'ai-agent-pause-3f1c…' (32 hex)
 * ```
 */
export function claimNamer(secret: string | Buffer): ClaimNamer {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new Error(
      `Cannot name claims as the secret must have at least ${MIN_SECRET_BYTES} bytes: got ${bytes.length}`,
    );
  }
  const key = Buffer.from(bytes); // a copy: the caller's buffer may be reused
  return (service, sessionKey) => {
    // The NUL separates the parts: ('a', 'b\0c') and ('a\0b', 'c') never hash alike (a service name has no NUL).
    const mac = createHmac('sha256', key).update(service).update('\0').update(sessionKey).digest('hex');
    return `${servicePart(service)}-${mac.slice(0, HASH_HEX)}`;
  };
}

/**
 * The service name cut to fit (a DNS label of at most 63 characters leaves 30 beside the hash), with no
 * `-` left at its end. The hash covers the whole name, so two long services with one prefix still differ.
 */
function servicePart(service: string): string {
  const cut = service.length > MAX_SERVICE_PART ? service.slice(0, MAX_SERVICE_PART) : service;
  return cut.replace(/-+$/, '') || 's';
}
