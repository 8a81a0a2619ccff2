/**
 * @module
 * The merge patch that brings a stored object to what the gateway wants, touching only the fields the
 * gateway owns: those it writes now, plus those it wrote last time (recorded in the `tether.dev/last-applied`
 * annotation, as `kubectl apply` keeps its own), so a field the manifest dropped is removed while a field only
 * the server has (a CRD default, another controller's) is left alone. Nothing to send when nothing the gateway
 * owns differs. Pure; used by `service-sync.ts`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeResource } from '../../kube/types.ts';

/** The annotation with the `spec` the gateway last wrote (JSON). */
export const LAST_APPLIED_ANNOTATION = 'tether.dev/last-applied';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `want` carrying its own spec as the last-applied annotation, for a create or a patch. */
export function withLastApplied(want: KubeResource): KubeResource {
  const annotations = { ...want.metadata.annotations, [LAST_APPLIED_ANNOTATION]: JSON.stringify(want.spec ?? {}) };
  return { ...want, metadata: { ...want.metadata, annotations } };
}

/**
 * The RFC 7386 merge patch from `have` (as read from the server) to `want` (as `objects.ts` builds it) over
 * the gateway's fields only: its labels and its spec. It also updates the last-applied annotation, but only
 * along with a change, so an object written by an older gateway (no annotation) is not rewritten for it.
 * @returns undefined when nothing the gateway owns differs
 */
export function ownedPatch(have: KubeResource, want: KubeResource): Json | undefined {
  const last = lastApplied(have);
  const patch: Json = {};
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(want.metadata.labels ?? {})) if (have.metadata.labels?.[k] !== v) labels[k] = v;
  const spec = ownedDiff(last, have.spec ?? {}, want.spec ?? {});
  if (spec !== undefined) patch.spec = spec;
  if (Object.keys(labels).length === 0 && spec === undefined) return undefined;
  const annotations = withLastApplied(want).metadata.annotations ?? {};
  patch.metadata = {
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    annotations: { [LAST_APPLIED_ANNOTATION]: annotations[LAST_APPLIED_ANNOTATION] },
  };
  return patch;
}

/** The spec the gateway wrote last, or undefined when the object carries none (or a broken one). */
function lastApplied(have: KubeResource): unknown {
  const text = have.metadata.annotations?.[LAST_APPLIED_ANNOTATION];
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The merge patch of the owned part: objects recurse key by key (a key the gateway wrote last time and wants
 * no more becomes null); anything else (scalars, arrays, which a merge patch replaces whole) is sent whole
 * when `have` does not already hold it.
 */
export function ownedDiff(last: unknown, have: unknown, want: unknown): unknown {
  if (!isObj(want) || !isObj(have)) return holds(last, have, want) ? undefined : want;
  const out: Json = {};
  for (const [k, v] of Object.entries(want)) {
    const d = ownedDiff(isObj(last) ? last[k] : undefined, have[k], v);
    if (d !== undefined) out[k] = d;
  }
  if (isObj(last)) for (const k of Object.keys(last)) if (!(k in want) && k in have) out[k] = null;
  return Object.keys(out).length === 0 ? undefined : out;
}

/**
 * True when `have` holds `want`: equal scalars, arrays of the same length whose items hold, objects with
 * every key of `want` held and no key the gateway wrote `last` time and dropped since. Keys only `have` has
 * (defaults the server filled in, also inside list items) do not count.
 */
export function holds(last: unknown, have: unknown, want: unknown): boolean {
  if (isObj(want)) {
    if (!isObj(have)) return false;
    for (const [k, v] of Object.entries(want)) if (!holds(isObj(last) ? last[k] : undefined, have[k], v)) return false;
    if (isObj(last)) for (const k of Object.keys(last)) if (!(k in want) && k in have) return false;
    return true;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return false;
    return want.every((w, i) => holds(Array.isArray(last) ? last[i] : undefined, have[i], w));
  }
  return isDeepStrictEqual(have, want);
}
