/**
 * @module
 * Refuses text with a lone UTF-16 surrogate (`"\ud800 x"`, from a JSON escape) anywhere in a
 * request's body or query, with 400 naming the field: such text has no UTF-8 form, so two different
 * lone surrogates became the same stored value (both U+FFFD) and the same value identity. Installed
 * by `app.ts` for every route (the NDJSON import checks its lines itself, with `loneSurrogateField`).
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../common/errors.ts';
import { fieldPath } from './validate.ts';

/** A lone surrogate: with the `u` flag, a well-formed pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The path of the first string (key or value) in `value` holding a lone surrogate.
 * @returns `''` for `value` itself, `a.b[2]` for a nested one, null when every string is well formed
 */
export function loneSurrogateField(value: unknown, path: PropertyKey[] = [], depth = 0): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? fieldPath(path) : null;
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const hit = loneSurrogateField(v, [...path, i], depth + 1);
      if (hit !== null) return hit;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    if (LONE_SURROGATE.test(k)) return fieldPath([...path, k]);
    const hit = loneSurrogateField(v, [...path, k], depth + 1);
    if (hit !== null) return hit;
  }
  return null;
}

/** Throws 400 naming the field when `value` holds a lone surrogate. */
export function requireWellFormed(value: unknown, where: string, prefix = ''): void {
  const field = loneSurrogateField(value);
  if (field === null) return;
  throw invalidRequest(prefix + (field || where), 'contains a lone UTF-16 surrogate (send well-formed Unicode text)');
}

/** Checks every request's query and parsed JSON body before its route sees them. */
export function installWellFormedCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async function wellFormedText(req) {
    requireWellFormed(req.query, 'query');
    if (typeof req.body !== 'string') requireWellFormed(req.body, 'body');
  });
}
