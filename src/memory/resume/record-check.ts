/**
 * @module
 * Checks one imported resume record as the write path would have made it, beyond its line's shape
 * (`server/schemas/resume-lines.ts`): times no later than a write accepts, a turn no longer than a
 * written turn is kept (above the token limit a write stores the content as an output and the turn
 * its opening), an output's `bytes` its content's size and at most 1 MiB. So whatever was imported,
 * the next write to the namespace works. Pure; called by the import route.
 */
import { invalidRequest } from '../../common/errors.ts';
import type { ResumeRecordLine } from '../../store/resume-types.ts';
import { MAX_FUTURE_MS } from '../values.ts';
import { MAX_OUTPUT_BYTES } from './records.ts';
import { estimateTokens } from './tokens.ts';

/**
 * Highest seq, version or epoch an import may carry: far above what writes reach (a write a
 * millisecond for 30 years), far below 2^53, where the next write's number would collide.
 */
export const MAX_RECORD_SEQ = 2 ** 40;

/** Highest working-state `step`, as `PATCH /v1/working-state` takes it. */
export const MAX_STEP = 1e9;

/** What the check compares with. */
export interface RecordCheckOptions {
  /** Epoch ms. */
  now: number;
  /** Most estimated tokens a turn keeps (the server's turn token limit). */
  turnTokenLimit: number;
}

/**
 * @param at how the record is named in errors, e.g. `line 3`
 * @throws {TetherError} 400 `invalid_request` naming the line and field
 */
export function checkImportedRecord(line: ResumeRecordLine, options: RecordCheckOptions, at: string): void {
  const field = (name: string) => `${at}.resume_record.${name}`;
  const r = line.record as { at?: number; updatedAt?: number };
  const time = line.kind === 'working_state' || line.kind === 'pointer' ? 'updated_at' : 'at';
  const ms = r.at ?? r.updatedAt ?? 0;
  if (ms > options.now + MAX_FUTURE_MS) throw invalidRequest(field(time), 'is in the future: a write stores now');
  if (line.kind === 'turn') {
    const tokens = estimateTokens(line.record.content);
    if (tokens > options.turnTokenLimit) {
      throw invalidRequest(
        field('content'),
        `is ${tokens} tokens; a turn keeps at most ${options.turnTokenLimit}: a write stores the rest as an output (output_ref)`,
      );
    }
  }
  if (line.kind === 'output') {
    const bytes = Buffer.byteLength(line.record.content, 'utf8');
    if (bytes > MAX_OUTPUT_BYTES) {
      throw invalidRequest(field('content'), `is ${bytes} bytes; an output holds at most ${MAX_OUTPUT_BYTES} (1 MiB)`);
    }
    if (line.record.bytes !== bytes) {
      throw invalidRequest(field('bytes'), `must be the content's size in UTF-8 bytes (${bytes})`);
    }
  }
}
