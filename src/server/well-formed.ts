/**
 * @module
 * Refuses text no store can keep the same, anywhere in a request's body, query or path parameters,
 * with 400 naming the field: a lone UTF-16 surrogate (`"\ud800 x"`, from a JSON escape) has no UTF-8
 * form, so two different ones became the same stored value (both U+FFFD) and value identity; U+0000
 * (NUL) cannot be held by PostgreSQL text or jsonb at all (SQLite kept it), and one NUL in a group
 * commit once failed the whole batch, other tenants' writes included. Installed by `app.ts` for every
 * route, MCP included (the NDJSON import checks its lines itself, with `requireWellFormed`).
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../common/errors.ts';
import { fieldPath } from './validate.ts';

/** A lone surrogate: with the `u` flag, a well-formed pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `text` cannot be stored, or null when it can. */
function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'contains U+0000 (NUL), which cannot be stored (remove or escape it)';
  if (LONE_SURROGATE.test(text)) return 'contains a lone UTF-16 surrogate (send well-formed Unicode text)';
  return null;
}

/** The first string in a value that cannot be stored: its path and why. */
export interface IllFormedText {
  /** `''` for the value itself, `a.b[2]` for a nested one. */
  field: string;
  problem: string;
}

/**
 * The first string (key or value) in `value` that cannot be stored; null when every one can. Every
 * request body goes through here (a batch: thousands of strings), so the walk allocates nothing until
 * it finds one: one path, pushed and popped, named only on a hit.
 */
export function illFormedText(value: unknown): IllFormedText | null {
  return walk(value, [], 0);
}

function walk(value: unknown, path: PropertyKey[], depth: number): IllFormedText | null {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem === null ? null : { field: fieldPath(path), problem };
  }
  if (value === null || typeof value !== 'object' || depth > 64) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const hit = walk(value[i], path, depth + 1);
      path.pop();
      if (hit !== null) return hit;
    }
    return null;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    path.push(k);
    const problem = textProblem(k);
    const hit =
      problem !== null
        ? { field: fieldPath(path), problem }
        : walk((value as Record<string, unknown>)[k], path, depth + 1);
    path.pop();
    if (hit !== null) return hit;
  }
  return null;
}

/** Throws 400 naming the field when `value` holds text that cannot be stored. */
export function requireWellFormed(value: unknown, where: string, prefix = ''): void {
  const hit = illFormedText(value);
  if (hit === null) return;
  throw invalidRequest(prefix + (hit.field || where), hit.problem);
}

/** Checks every request's path parameters, query and parsed JSON body before its route sees them. */
export function installWellFormedCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async function wellFormedText(req) {
    requireWellFormed(req.params, 'params');
    requireWellFormed(req.query, 'query');
    // A route that checks its body in slices (sliced-body.ts) checks its text there too.
    if (req.routeOptions.config.slicedBody) return;
    if (typeof req.body !== 'string') requireWellFormed(req.body, 'body');
  });
}
