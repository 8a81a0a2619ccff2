/**
 * @module
 * Checks one imported event as the write path would have made it: the predicate is the canonical name
 * of one in the tenant's registry in force when the event was recorded, the subject is normalised,
 * the value is of the predicate's type and exactly as a write stores it, the value key is its
 * identity, and the times are ones a write accepts. Ids and actors are kept (import restores backups).
 * Pure; called by `backup-import.ts`.
 */
import { invalidRequest } from '../common/errors.ts';
import type { StoredEvent } from '../store/fact-store.ts';
import type { Registry } from './registry.ts';
import { MAX_FUTURE_MS, normalizeSubject, typedValue } from './values.ts';

/**
 * @param registry the tenant's registry in force at `e.recordedAt`
 * @param now epoch ms
 * @param at how the event is named in errors, e.g. `line 3`
 * @throws {TetherError} 400 `invalid_request` naming the line and field
 */
export function checkImportedEvent(e: StoredEvent, registry: Registry, now: number, at: string): void {
  const def = registry.find(e.predicate);
  if (!def) {
    throw invalidRequest(
      `${at}.predicate`,
      `unknown predicate '${e.predicate}' in the registry of '${e.tenant}' in force at ${new Date(e.recordedAt).toISOString()}`,
    );
  }
  if (def.name !== e.predicate) {
    throw invalidRequest(`${at}.predicate`, `must be the canonical name '${def.name}', as a write stores it`);
  }
  const subject = normalizeSubject(e.subject, `${at}.subject`);
  if (subject !== e.subject) {
    throw invalidRequest(`${at}.subject`, `is not normalised: a write stores it as '${subject.slice(0, 80)}'`);
  }
  if (e.value !== null) {
    const typed = typedValue(def, e.value, `${at}.value`);
    if (typed.value !== e.value) {
      throw invalidRequest(`${at}.value`, `is not as a write stores it ('${String(typed.value).slice(0, 80)}')`);
    }
    if (typed.valueKey !== e.valueKey) {
      throw invalidRequest(`${at}.value_key`, `must be the identity of the value ('${typed.valueKey.slice(0, 80)}')`);
    }
  } else if (!e.retraction) {
    throw invalidRequest(`${at}.value`, 'an assertion needs a value');
  } else if (e.valueKey !== null) {
    throw invalidRequest(`${at}.value_key`, 'a retraction of every value has no value_key');
  }
  if (e.recordedAt > now + MAX_FUTURE_MS) throw invalidRequest(`${at}.recorded_at`, 'is in the future');
  if (e.observedAt > e.recordedAt + MAX_FUTURE_MS) {
    throw invalidRequest(`${at}.observed_at`, 'is more than 60 s after recorded_at: a write refuses that');
  }
}
