/**
 * @module
 * Predicate registries: validation of a predicate set, lookup by name or alias with close-name
 * suggestions, the rule that a value type never changes, and which version applies at a time.
 * Pure logic; the engine loads versions from the store.
 */
import { invalidRequest } from '../common/errors.ts';
import type { PredicateDef, RegistryVersion } from '../store/registry-store.ts';
import { STARTER_REGISTRIES } from './starter-registries.ts';

/** `note` always exists, for statements that fit no predicate. */
export const NOTE_PREDICATE: PredicateDef = Object.freeze({
  name: 'note',
  cardinality: 'multi',
  valueType: 'string',
  description: 'a statement that fits no other predicate',
}) as PredicateDef;

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const VALUE_TYPES = new Set(['string', 'number', 'boolean', 'enum', 'date', 'ref']);

/** A predicate set with lookup by name and alias. */
export class Registry {
  readonly predicates: readonly PredicateDef[];
  readonly #byName = new Map<string, PredicateDef>();

  constructor(predicates: readonly PredicateDef[]) {
    const all = predicates.some((p) => p.name === 'note') ? predicates : [...predicates, NOTE_PREDICATE];
    this.predicates = all;
    for (const def of all) {
      this.#byName.set(def.name, def);
      for (const alias of def.aliases ?? []) this.#byName.set(alias, def);
    }
  }

  /** The predicate named `name` (or aliased), or undefined. */
  find(name: string): PredicateDef | undefined {
    return this.#byName.get(normalizePredicateName(name));
  }

  /**
   * The predicate named `name`.
   * @throws {TetherError} 400 `invalid_request` naming `field` and listing close names.
   */
  resolve(name: string, field: string): PredicateDef {
    const def = this.find(name);
    if (def) return def;
    const close = closeNames(normalizePredicateName(name), [...this.#byName.keys()]);
    const hint = close.length > 0 ? `; did you mean ${close.map((c) => `'${c}'`).join(', ')}?` : '';
    throw invalidRequest(field, `unknown predicate '${name}'${hint} (or use 'note')`);
  }
}

/** Lower-cases and snake-cases a predicate name as typed by a client (`Favorite Color` -> `favorite_color`). */
export function normalizePredicateName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/** Up to three names within edit distance 3 (or sharing a prefix), closest first. */
export function closeNames(name: string, candidates: string[]): string[] {
  return candidates
    .map((c) => ({ c, d: c.startsWith(name) || name.startsWith(c) ? 1 : editDistance(name, c) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(name.length / 3)))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c))
    .slice(0, 3)
    .map((x) => x.c);
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

/**
 * Checks a whole predicate set sent by a client.
 * @throws {TetherError} 400 naming the field, e.g. `predicates[2].allowed`.
 */
export function validatePredicates(predicates: PredicateDef[]): void {
  const seen = new Map<string, string>();
  predicates.forEach((def, i) => {
    const at = `predicates[${i}]`;
    if (!NAME.test(def.name)) throw invalidRequest(`${at}.name`, `'${def.name}' must be snake_case (a-z, 0-9, _)`);
    if (!VALUE_TYPES.has(def.valueType)) throw invalidRequest(`${at}.value_type`, `unknown value type`);
    if (def.valueType === 'enum' && (!def.allowed || def.allowed.length === 0)) {
      throw invalidRequest(`${at}.allowed`, 'an enum predicate needs at least one allowed value');
    }
    if (def.valueType !== 'enum' && def.allowed !== undefined) {
      throw invalidRequest(`${at}.allowed`, 'only enum predicates take allowed values');
    }
    for (const [j, n] of [def.name, ...(def.aliases ?? [])].entries()) {
      const field = j === 0 ? `${at}.name` : `${at}.aliases[${j - 1}]`;
      if (!NAME.test(n)) throw invalidRequest(field, `'${n}' must be snake_case (a-z, 0-9, _)`);
      if (n === 'note' && def.name !== 'note') throw invalidRequest(field, "'note' is built in and cannot be an alias");
      const other = seen.get(n);
      if (other !== undefined) throw invalidRequest(field, `'${n}' is already used by predicate '${other}'`);
      seen.set(n, def.name);
    }
    if (def.name === 'note' && (def.cardinality !== 'multi' || def.valueType !== 'string')) {
      throw invalidRequest(`${at}`, "'note' is built in: multi, string");
    }
  });
}

/**
 * Refuses a change of value type for any predicate that existed before, and an alias that takes the
 * name of an earlier predicate: facts are stored under the name they were written with, so making an
 * old name an alias of a new one (a rename) would hide their history and leave two current values of
 * a single fact. Renaming is not supported; an alias can only be a name no version has defined.
 * @throws {TetherError} 400 naming the field.
 */
export function checkRegistryChange(before: readonly PredicateDef[], next: PredicateDef[]): void {
  const old = new Map(before.map((d) => [d.name, d]));
  next.forEach((def, i) => {
    const prev = old.get(def.name);
    if (prev && prev.valueType !== def.valueType) {
      throw invalidRequest(
        `predicates[${i}].value_type`,
        `the value type of '${def.name}' cannot change (was ${prev.valueType}, got ${def.valueType})`,
      );
    }
    (def.aliases ?? []).forEach((alias, j) => {
      if (alias !== def.name && old.has(alias)) {
        throw invalidRequest(
          `predicates[${i}].aliases[${j}]`,
          `'${alias}' is a predicate of an earlier version, with its facts stored under that name: it cannot become an alias of '${def.name}' (renaming a predicate is not supported; keep '${alias}')`,
        );
      }
    });
  });
}

/** The starter registry named `name`. @throws {Error} naming the known names. */
export function starterRegistry(name: string): PredicateDef[] {
  const set = STARTER_REGISTRIES[name];
  if (!set) {
    throw new Error(`unknown registry '${name}': choose one of ${Object.keys(STARTER_REGISTRIES).join(', ')}`);
  }
  return set.map((d) => ({ ...d }));
}

/** The version in force at `at` (epoch ms): the newest recorded at or before it. */
export function versionAt(versions: readonly RegistryVersion[], at: number): RegistryVersion | undefined {
  let found: RegistryVersion | undefined;
  for (const v of versions) if (v.recordedAt <= at) found = v;
  return found ?? versions[0];
}
