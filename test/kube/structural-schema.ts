/**
 * @module
 * What kube-apiserver does to a custom resource on every write, from the CRD's structural schema: unknown
 * fields are pruned (unless `x-kubernetes-preserve-unknown-fields`), then `default`s are filled in for every
 * missing property of an object that is present (an absent parent object stays absent), then `enum` and
 * `type` are validated (a failure is 422 Invalid naming the field). Our own code over our own schema type
 * (`crd-schemas.ts`); pure, used by the double's object store and `rest.ts`.
 */

/** The part of an OpenAPI v3 structural schema the double reads. */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  /** Known properties of an object. */
  properties?: Readonly<Record<string, StructuralSchema>>;
  /** The schema of every value of a map (`labels`). */
  additionalProperties?: StructuralSchema;
  /** The schema of every item of an array. */
  items?: StructuralSchema;
  /** Filled in when the property is missing from an object that is present. */
  default?: unknown;
  enum?: readonly unknown[];
  /** `x-kubernetes-preserve-unknown-fields: true`: fields not in `properties` are kept. */
  preserveUnknown?: boolean;
  /** `x-kubernetes-int-or-string: true`. */
  intOrString?: boolean;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Prunes and defaults `value` in place of a copy: the value as the API server would store it.
 * `null` is pruned before defaulting (the schemas here have no `nullable` field), as the API server does.
 */
export function pruneAndDefault(value: unknown, schema: StructuralSchema): unknown {
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v) => pruneAndDefault(v, items)) : structuredClone(value);
  }
  if (!isObject(value)) return value;
  const known = schema.properties;
  // An object schema with no fields named keeps everything only when it says so (else all is unknown).
  if (!known && !schema.additionalProperties) return schema.preserveUnknown ? structuredClone(value) : {};
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    const sub = known?.[k] ?? schema.additionalProperties;
    if (sub) out[k] = pruneAndDefault(v, sub);
    else if (schema.preserveUnknown) out[k] = structuredClone(v);
  }
  for (const [k, sub] of Object.entries(known ?? {})) {
    if (out[k] === undefined && sub.default !== undefined) out[k] = pruneAndDefault(structuredClone(sub.default), sub);
  }
  return out;
}

/** The first schema violation of `value` as the API server words it (`spec.operatingMode: Unsupported value`), or null. */
export function validate(value: unknown, schema: StructuralSchema, path: string): string | null {
  if (value === undefined) return null;
  if (schema.enum && !schema.enum.includes(value)) {
    const allowed = schema.enum.map((e) => JSON.stringify(e)).join(', ');
    return `${path}: Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed}`;
  }
  const wrong = typeMismatch(value, schema);
  if (wrong) return `${path}: Invalid value: "${wrong}": ${path} in body must be of type ${schema.type}: "${wrong}"`;
  if (Array.isArray(value) && schema.items) {
    for (const [i, v] of value.entries()) {
      const e = validate(v, schema.items, `${path}[${i}]`);
      if (e) return e;
    }
  }
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const sub = schema.properties?.[k] ?? schema.additionalProperties;
      const e = sub ? validate(v, sub, `${path}.${k}`) : null;
      if (e) return e;
    }
  }
  return null;
}

/** The JSON type of `value` when the schema wants another, else null. */
function typeMismatch(value: unknown, schema: StructuralSchema): string | null {
  if (schema.type === undefined || schema.intOrString) return null;
  const actual = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : typeof value === 'number'
        ? Number.isInteger(value)
          ? 'integer'
          : 'number'
        : typeof value;
  if (actual === schema.type) return null;
  if (schema.type === 'number' && actual === 'integer') return null;
  return actual;
}
