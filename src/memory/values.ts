/**
 * @module
 * Typed values: checks a value against its predicate's type and gives its identity key
 * (case-insensitive for strings, numeric for numbers), plus subject normalisation. Pure.
 */
import { invalidRequest } from '../common/errors.ts';
import type { PredicateDef } from '../store/registry-store.ts';

/** Longest string value, evidence, in characters. */
export const MAX_TEXT = 8192;
/** Longest subject, in characters. */
export const MAX_SUBJECT = 256;
/** How far ahead of the server clock `observed_at` may be. */
export const MAX_FUTURE_MS = 60_000;

/** A checked value and its identity. */
export interface TypedValue {
  value: string | number | boolean;
  valueKey: string;
}

/** Normalises a subject: trimmed, inner whitespace collapsed, lower case. @throws 400 naming `field`. */
export function normalizeSubject(subject: string, field = 'subject'): string {
  const s = subject.trim().replace(/\s+/g, ' ').toLowerCase();
  if (s.length === 0) throw invalidRequest(field, 'must not be empty');
  if (s.length > MAX_SUBJECT) throw invalidRequest(field, `must be at most ${MAX_SUBJECT} characters`);
  return s;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Checks `raw` against `def` and returns the stored value and its identity key.
 * @throws {TetherError} 400 `invalid_request` naming `field` (wrong type, enum value not allowed, too long).
 */
export function typedValue(def: PredicateDef, raw: unknown, field = 'value'): TypedValue {
  switch (def.valueType) {
    case 'string': {
      const s = requireString(raw, field, def);
      return { value: s, valueKey: s.toLowerCase() };
    }
    case 'ref': {
      const s = normalizeSubject(requireString(raw, field, def), field);
      return { value: s, valueKey: s };
    }
    case 'number': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) {
        throw invalidRequest(field, `'${def.name}' takes a number, got ${describe(raw)}`);
      }
      return { value: raw, valueKey: String(raw) };
    }
    case 'boolean': {
      if (typeof raw !== 'boolean')
        throw invalidRequest(field, `'${def.name}' takes true or false, got ${describe(raw)}`);
      return { value: raw, valueKey: String(raw) };
    }
    case 'enum': {
      const s = requireString(raw, field, def);
      const hit = (def.allowed ?? []).find((a) => a.toLowerCase() === s.toLowerCase());
      if (hit === undefined) {
        throw invalidRequest(
          field,
          `'${s}' is not allowed for '${def.name}'; allowed: ${(def.allowed ?? []).join(', ')}`,
        );
      }
      return { value: hit, valueKey: hit.toLowerCase() };
    }
    case 'date': {
      const s = requireString(raw, field, def);
      // Date.parse rolls 2026-02-30 over to March: a real date must read back as itself.
      if (DATE.test(s) && isoDay(s) === s) return { value: s, valueKey: s };
      if (DATETIME.test(s) && !Number.isNaN(Date.parse(s)) && isoDay(s.slice(0, 10)) === s.slice(0, 10)) {
        const iso = new Date(s).toISOString();
        return { value: iso, valueKey: iso };
      }
      throw invalidRequest(
        field,
        `'${def.name}' takes a date (YYYY-MM-DD or ISO 8601 date-time), got '${s.slice(0, 40)}'`,
      );
    }
  }
}

/**
 * `day` (YYYY-MM-DD) as the calendar reads it back, or null when it is no date at all. `Date.parse`
 * rolls impossible days over (`2026-02-30` reads back as `2026-03-02`), so a real day is one that
 * reads back as itself. Also used by the `instant` schema (`server/schemas/common.ts`).
 */
export function isoDay(day: string): string | null {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString().slice(0, 10);
}

function requireString(raw: unknown, field: string, def: PredicateDef): string {
  if (typeof raw !== 'string')
    throw invalidRequest(field, `'${def.name}' takes a ${def.valueType}, got ${describe(raw)}`);
  const s = raw.trim();
  if (s.length === 0) throw invalidRequest(field, 'must not be empty');
  if (s.length > MAX_TEXT) throw invalidRequest(field, `must be at most ${MAX_TEXT} characters`);
  return s;
}

function describe(raw: unknown): string {
  if (raw === null) return 'null';
  if (Array.isArray(raw)) return 'an array';
  return `a ${typeof raw}`;
}
