/**
 * @module
 * Reads `exp` from a JWT's payload without verifying it (TokenReview already did), so a key
 * is never minted to outlive the token it came from. Pure; called by `kubernetes-exchanger.ts`.
 */

/**
 * The token's `exp` as epoch ms, or `null` when the token is not a JWT with a numeric `exp`.
 * @example
 * tokenExpiresAt('eyJ...') // 1767225600000
 */
export function tokenExpiresAt(token: string): number | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (!payload || typeof payload !== 'object') return null;
    const exp = (payload as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) && exp > 0 ? Math.floor(exp * 1000) : null;
  } catch {
    return null;
  }
}
