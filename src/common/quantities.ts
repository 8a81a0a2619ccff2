/**
 * @module
 * Kubernetes resource quantities (`256Mi`, `1.5Gi`, `500m`, `2`, `1e9`) as plain numbers, for the
 * container `resources.limits` the local runtime turns into cgroup limits. Pure; imports nothing.
 * Hand-written because @kubernetes/client-node's `quantityToScalar` throws on decimals before a
 * suffix (`1.5Gi`) and returns number or bigint by suffix.
 */

const SUFFIX: Readonly<Record<string, number>> = Object.freeze({
  '': 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
});

const QUANTITY = /^([+]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)$/;

/**
 * Parses a quantity into its base unit (bytes for memory, cores for cpu).
 * @throws {Error} naming the text when it is not a non-negative quantity
 */
export function parseQuantity(text: string): number {
  const m = QUANTITY.exec(text.trim());
  const factor = m ? SUFFIX[m[2] ?? ''] : undefined;
  if (!m || factor === undefined) {
    throw new Error(`is not a Kubernetes quantity (like 256Mi, 1Gi, 500m or 2): got ${JSON.stringify(text)}`);
  }
  return Number(m[1]) * factor;
}
