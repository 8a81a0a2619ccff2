/**
 * @module
 * `--registry NAME|FILE`: a starter registry by name, or a JSON/YAML file holding
 * `{predicates:[{name, cardinality, value_type, allowed?, aliases?, description?}]}` (the wire shape).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { starterRegistry, validatePredicates } from '../memory/registry.ts';
import { STARTER_REGISTRIES } from '../memory/starter-registries.ts';
import { predicateDefOf, putRegistryBody } from '../server/schemas/registry.ts';
import { parseWith } from '../server/validate.ts';
import type { PredicateDef } from '../store/store.ts';

/** Loads the default registry for new tenants. @throws {Error} naming the file and field. */
export function loadRegistryOption(value: string): PredicateDef[] {
  if (value in STARTER_REGISTRIES) return starterRegistry(value);
  if (!existsSync(value)) {
    throw new Error(
      `--registry: '${value}' is neither a starter registry (${Object.keys(STARTER_REGISTRIES).join(', ')}) nor a file`,
    );
  }
  try {
    const text = readFileSync(value, 'utf8');
    const doc = value.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    const body = parseWith(putRegistryBody, doc, value);
    const defs = body.predicates.map(predicateDefOf);
    validatePredicates(defs);
    return defs;
  } catch (err) {
    throw new Error(`--registry ${value}: ${(err as Error).message}`);
  }
}
