/**
 * @module
 * NDJSON import body -> the registry versions, events and resume records it carries, each named by its line
 * (`line 3`), with wire checks only: JSON, shape, well-formed text, a namespace and tenant the admin
 * key reaches. The memory checks (registry, values, times) are `memory/backup-import.ts`'s. Used by
 * the import route.
 */
import { type AuthContext, NAME_PATTERN, parseNamespace, reachesTenant } from '../auth/auth-context.ts';
import { invalidRequest, namespaceMismatch } from '../common/errors.ts';
import { TimeSlice } from '../common/time-slice.ts';
import type { ImportedEvent, ImportedVersion } from '../memory/backup-import.ts';
import { checkImportedRecord, type RecordCheckOptions } from '../memory/resume/record-check.ts';
import type { ResumeRecordLine } from '../store/resume-types.ts';
import { eventLine, registryLine } from './schemas/events.ts';
import { predicateDefOf } from './schemas/registry.ts';
import { resumeRecordLine, resumeRecordOf } from './schemas/resume-lines.ts';
import { parseWith } from './validate.ts';
import { requireWellFormed } from './well-formed.ts';

/** The items of an import's body, in the order of its lines. */
export interface ImportLines {
  versions: ImportedVersion[];
  events: ImportedEvent[];
  records: ResumeRecordLine[];
}

/**
 * Parses every line of `body`; resume records are also checked as a write would have made them
 * (`checkImportedRecord`, with `records`' time and turn limit). A 1 MiB body is thousands of lines:
 * the loop lets the event loop turn every few ms (`TimeSlice`), so other tenants' requests go on.
 * @throws {TetherError} 400/403 naming the first bad line and field
 */
export async function parseImportLines(
  body: string,
  auth: AuthContext,
  records: RecordCheckOptions,
): Promise<ImportLines> {
  const versions: ImportedVersion[] = [];
  const events: ImportedEvent[] = [];
  const recordLines: ResumeRecordLine[] = [];
  const slice = new TimeSlice(auth.lane);
  for (const [i, raw] of body.split('\n').entries()) {
    if (slice.due()) await slice.yield();
    const text = raw.trim();
    if (text === '') continue;
    const at = `line ${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw invalidRequest(at, 'malformed JSON');
    }
    requireWellFormed(json, at, `${at}.`);
    if (json !== null && typeof json === 'object' && 'registry_version' in json) {
      const { registry_version: v } = parseWith(registryLine, json, at, `${at}.`);
      if (!NAME_PATTERN.test(v.tenant)) throw invalidRequest(`${at}.registry_version.tenant`, 'is not a tenant name');
      if (!reachesTenant(auth, v.tenant)) throw namespaceMismatch(`${auth.tenant}:*`, `${v.tenant}:*`);
      const predicates = v.predicates.map((p) =>
        predicateDefOf({
          ...p,
          // an export writes absent lists and texts as null or []: stored as a write would store them
          allowed: p.allowed ?? undefined,
          aliases: p.aliases?.length ? p.aliases : undefined,
          description: p.description ?? undefined,
        }),
      );
      versions.push({ at, version: { id: v.id, tenant: v.tenant, recordedAt: v.recorded_at, predicates } });
      continue;
    }
    if (json !== null && typeof json === 'object' && 'resume_record' in json) {
      const parsed = parseWith(
        resumeRecordLine,
        (json as { resume_record: unknown }).resume_record,
        at,
        `${at}.resume_record.`,
      );
      const { tenant } = parseNamespace(parsed.namespace, `${at}.resume_record.namespace`);
      if (!reachesTenant(auth, tenant)) throw namespaceMismatch(`${auth.tenant}:*`, parsed.namespace);
      const record = resumeRecordOf(parsed);
      checkImportedRecord(record, records, at);
      recordLines.push(record);
      continue;
    }
    const line = parseWith(eventLine, json, at, `${at}.`);
    const { tenant } = parseNamespace(line.namespace, `${at}.namespace`);
    if (!reachesTenant(auth, tenant)) throw namespaceMismatch(`${auth.tenant}:*`, line.namespace);
    if (line.actor.tenant !== tenant) throw invalidRequest(`${at}.actor.tenant`, 'must be the tenant of the namespace');
    events.push({
      at,
      event: {
        id: line.id,
        namespace: line.namespace,
        tenant,
        subject: line.subject,
        predicate: line.predicate,
        value: line.value,
        valueKey: line.value_key,
        retraction: line.retraction,
        kind: line.kind,
        confidence: line.confidence,
        source: line.source,
        evidence: line.evidence,
        observedAt: line.observed_at,
        recordedAt: line.recorded_at,
        actor: { tenant, agent: line.actor.agent, session: line.actor.session, keyId: line.actor.key_id },
      },
    });
  }
  return { versions, events, records: recordLines };
}
