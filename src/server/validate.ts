/**
 * @module
 * Zod parsing for routes: a failed parse becomes 400 `invalid_request` naming the first bad field
 * (`statements[2].value`, or the unknown field itself). Called by every route module.
 */
import { z } from 'zod';
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
  const data = input === undefined ? {} : input;
  const r = unionBranch(schema, data).safeParse(data);
  if (r.success) return r.data as z.output<S>;
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

/**
 * The branch of a union of objects that `input` means: the one whose fields include most of the input's
 * (first on a tie), so an error names a field of that branch ("statements[2].value") instead of Zod's
 * "Invalid input" for the union. Any other schema is returned as it is.
 */
function unionBranch(schema: z.ZodType, input: unknown): z.ZodType {
  if (!(schema instanceof z.ZodUnion) || typeof input !== 'object' || input === null) return schema;
  const keys = Object.keys(input);
  let best: z.ZodType = schema;
  let bestHits = -1;
  for (const option of schema.options as readonly z.ZodType[]) {
    if (!(option instanceof z.ZodObject)) return schema;
    const hits = keys.filter((k) => k in option.shape).length;
    if (hits > bestHits) [best, bestHits] = [option, hits];
  }
  return best;
}
