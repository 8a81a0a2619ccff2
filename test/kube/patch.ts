/**
 * @module
 * PATCH bodies as kube-apiserver applies them: JSON patch (RFC 6902, via fast-json-patch, a well-kept
 * implementation with `test` ops) and JSON merge patch (RFC 7386) for every kind; strategic merge patch
 * only for core kinds (approximated as a merge patch: the double's core kinds have no keyed lists it
 * changes), 415 for custom resources as the real server answers. Pure; used by `rest.ts`.
 */
import jsonPatch from 'fast-json-patch';

/** The content types of PATCH. */
export const PATCH_TYPES = Object.freeze({
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
});

/** What applying a patch gave: the new document, or an HTTP status and a message. */
export type PatchOutcome = { ok: true; doc: unknown } | { ok: false; status: number; reason: string; message: string };

/**
 * Applies a PATCH body of `contentType` to `doc` (not changed).
 * @param custom true for custom resources (no strategic merge patch)
 */
export function applyPatch(doc: unknown, contentType: string, body: string, custom: boolean): PatchOutcome {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const accepted: string[] = custom
    ? [PATCH_TYPES.json, PATCH_TYPES.merge]
    : [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic];
  if (!accepted.includes(type)) {
    return {
      ok: false,
      status: 415,
      reason: 'UnsupportedMediaType',
      message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    };
  }
  let patch: unknown;
  try {
    patch = JSON.parse(body);
  } catch (err) {
    return { ok: false, status: 400, reason: 'BadRequest', message: `error decoding patch: ${(err as Error).message}` };
  }
  if (type === PATCH_TYPES.json) {
    if (!Array.isArray(patch)) {
      return { ok: false, status: 400, reason: 'BadRequest', message: 'json patch must be a list of operations' };
    }
    try {
      return { ok: true, doc: jsonPatch.applyPatch(structuredClone(doc), patch, true, false).newDocument };
    } catch (err) {
      // A failed `test` op or a bad path: the API server answers 422 Invalid.
      return {
        ok: false,
        status: 422,
        reason: 'Invalid',
        message: `the server rejected our request: ${(err as Error).message}`,
      };
    }
  }
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return { ok: false, status: 400, reason: 'BadRequest', message: 'merge patch must be a JSON object' };
  }
  return { ok: true, doc: mergePatch(doc, patch) };
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
