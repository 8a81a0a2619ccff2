/**
 * @module
 * Zod parsing for routes: a failed parse becomes 400 `invalid_request` naming the first bad field
 * (`statements[2].value`, or the unknown field itself). Called by every route module.
 */
import type { z } from 'zod';
import { invalidRequest } from '../common/errors.ts';

/** Formats a Zod issue path as `a.b[2].c`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

/**
 * Parses `input` with `schema`.
 * @param where how to name the whole input when the issue has no path (e.g. `body`, `query`)
 * @param prefix put before every field name (e.g. `line 3.`)
 * @throws {TetherError} 400 `invalid_request` naming the field.
 */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, where = 'body', prefix = ''): z.output<S> {
  const r = schema.safeParse(input === undefined ? {} : input);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  if (!issue) throw invalidRequest(where, 'is invalid');
  if (issue.code === 'unrecognized_keys') {
    const key = String(issue.keys[0]);
    throw invalidRequest(prefix + (fieldPath([...issue.path, key]) || key), 'unknown field');
  }
  const path = fieldPath(issue.path);
  const field = path ? prefix + path : where;
  throw invalidRequest(field, issue.message);
}
