/**
 * @module
 * Resume records under the lease: working state (merged, versioned), milestones, turns (deduped by
 * message id; large content moved to an output), outputs (<= 1 MiB), pointers. Every write is one
 * fenced store call (`ResumeStore.writeResume`), never the fact writer's batching queue. Knows nothing of HTTP.
 */
import type { Clock } from '../../common/clock.ts';
import { TetherError } from '../../common/errors.ts';
import { newEventId } from '../../common/ids.ts';
import type { ResumeStore } from '../../store/resume-store.ts';
import type {
  MilestoneRecord,
  OutputInfo,
  OutputRecord,
  PointerRecord,
  PointerType,
  ResumeWrite,
  ResumeWriteResult,
  TurnRecord,
  TurnRole,
  WorkingStateRecord,
} from '../../store/resume-types.ts';
import { leaseNotHeld, refusalError } from './lease-errors.ts';
import { cutToTokens, estimateTokens } from './tokens.ts';
import { mergeState, type WorkingStatePatch } from './working-state.ts';

/** Largest output content, bytes of UTF-8 (1 MiB). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;
/** Turn content above this many estimated tokens is stored as an output. @default 2000 */
export const DEFAULT_TURN_TOKEN_LIMIT = 2000;
/** Estimated tokens of a moved turn's opening kept in the turn. */
export const TURN_OPENING_TOKENS = 200;
/** How often a working-state write re-reads and merges again after a concurrent write. */
const MERGE_ATTEMPTS = 5;

/** Where a write goes: the namespace and the writer's lease epoch (undefined: none was sent). */
export interface WriteScope {
  namespace: string;
  epoch: number | undefined;
}

/** A turn to record. */
export interface TurnInput {
  role: TurnRole;
  content: string;
  name?: string;
  messageId?: string;
  brief?: string;
}

/** An output to store. */
export interface OutputInput {
  content: string;
  tool?: string;
  summary?: string;
}

/** A pointer to set. */
export interface PointerInput {
  type: PointerType;
  fields: Record<string, string>;
  note?: string;
}

/** Options of `ResumeRecords`. */
export interface ResumeRecordsOptions {
  store: ResumeStore;
  clock: Clock;
  /** Turn content above this many estimated tokens goes to an output. @default 2000 */
  turnTokenLimit?: number;
}

/** The fenced writes and the reads of resume records. */
export class ResumeRecords {
  readonly #store: ResumeStore;
  readonly #clock: Clock;
  readonly #turnTokenLimit: number;

  constructor(options: ResumeRecordsOptions) {
    const limit = options.turnTokenLimit ?? DEFAULT_TURN_TOKEN_LIMIT;
    if (!Number.isInteger(limit) || limit < TURN_OPENING_TOKENS) {
      throw new Error(
        `Cannot build resume records as 'turnTokenLimit' must be an integer >= ${TURN_OPENING_TOKENS}: got ${limit}`,
      );
    }
    this.#store = options.store;
    this.#clock = options.clock;
    this.#turnTokenLimit = limit;
  }

  /** Runs fenced writes; `build` gets the epoch and now. @throws 409 lease errors */
  async #write(
    scope: WriteScope,
    build: (epoch: number, now: number) => ResumeWrite[],
  ): Promise<ResumeWriteResult[] | 'conflict'> {
    if (scope.epoch === undefined) throw leaseNotHeld(scope.namespace);
    const fence = { namespace: scope.namespace, epoch: scope.epoch, now: this.#clock.now() };
    const got = await this.#store.writeResume(fence, build(fence.epoch, fence.now));
    if (got.ok) return got.value;
    if (got.reason === 'conflict') return 'conflict';
    throw refusalError(got.reason, fence, got.lease);
  }

  /** Merges a patch into the working state as a new version, re-merging after a concurrent write. */
  async #saveState(
    scope: WriteScope,
    patch: WorkingStatePatch,
    extra: (epoch: number, now: number) => ResumeWrite[] = () => [],
  ): Promise<{ state: WorkingStateRecord; results: ResumeWriteResult[] }> {
    for (let attempt = 0; attempt < MERGE_ATTEMPTS; attempt++) {
      const current = await this.#store.workingState(scope.namespace);
      let state: WorkingStateRecord | undefined;
      const results = await this.#write(scope, (epoch, now) => {
        state = mergeState(current, patch, { namespace: scope.namespace, epoch, now });
        return [...extra(epoch, now), { kind: 'working_state', state }];
      });
      if (results !== 'conflict') return { state: state as WorkingStateRecord, results };
    }
    throw new TetherError('unavailable', 'the working state kept changing under this write: retry it', {
      retryAfter: 1,
    });
  }

  /** Merges the known fields of `patch` into the working state; returns the new version. */
  async patchWorkingState(scope: WriteScope, patch: WorkingStatePatch): Promise<WorkingStateRecord> {
    return (await this.#saveState(scope, patch)).state;
  }

  /** Records a milestone and sets `last_milestone` (and `progress` when given) in one write. */
  async addMilestone(
    scope: WriteScope,
    input: { name: string; progress?: string },
  ): Promise<{ milestone: MilestoneRecord; state: WorkingStateRecord }> {
    const patch: WorkingStatePatch = { lastMilestone: input.name };
    if (input.progress !== undefined) patch.progress = input.progress;
    let milestone: Omit<MilestoneRecord, 'seq'> | undefined;
    const { state, results } = await this.#saveState(scope, patch, (epoch, now) => {
      milestone = { namespace: scope.namespace, name: input.name, progress: input.progress ?? null, at: now, epoch };
      return [{ kind: 'milestone', milestone }];
    });
    const seq = (results[0] as { seq: number }).seq;
    return { milestone: { ...(milestone as Omit<MilestoneRecord, 'seq'>), seq }, state };
  }

  /**
   * Records a turn; a repeated `messageId` is not stored again (the first seq is answered). Content
   * above the token limit is stored whole as an output; the turn keeps its opening and the ref.
   * @throws {TetherError} 413 `too_large` above 1 MiB
   */
  async recordTurn(
    scope: WriteScope,
    input: TurnInput,
  ): Promise<{ seq: number; duplicate: boolean; outputRef: string | null }> {
    const large = estimateTokens(input.content) > this.#turnTokenLimit;
    if (large) checkOutputSize(input.content, 'content');
    let outputRef: string | null = null;
    const results = await this.#write(scope, (epoch, now) => {
      let output: OutputRecord | undefined;
      let content = input.content;
      if (large) {
        output = outputRecord(
          scope.namespace,
          { content: input.content, tool: input.name, summary: input.brief },
          epoch,
          now,
        );
        outputRef = output.ref;
        content = `${cutToTokens(input.content, TURN_OPENING_TOKENS)}\n[full content: output ${output.ref}]`;
      }
      const turn: Omit<TurnRecord, 'seq'> = {
        namespace: scope.namespace,
        role: input.role,
        content,
        name: input.name ?? null,
        messageId: input.messageId ?? null,
        brief: input.brief ?? null,
        outputRef,
        at: now,
        epoch,
      };
      return [{ kind: 'turn', turn, output }];
    });
    const r = (results as ResumeWriteResult[])[0] as { seq: number; duplicate: boolean };
    if (r.duplicate) {
      const [stored] = await this.#store.turns({ namespace: scope.namespace, limit: 1, beforeSeq: r.seq + 1 });
      outputRef = stored?.outputRef ?? null;
    }
    return { seq: r.seq, duplicate: r.duplicate, outputRef };
  }

  /** Stores an output by reference. @throws {TetherError} 413 `too_large` above 1 MiB */
  async storeOutput(scope: WriteScope, input: OutputInput): Promise<OutputInfo> {
    checkOutputSize(input.content, 'content');
    let output: OutputRecord | undefined;
    await this.#write(scope, (epoch, now) => {
      output = outputRecord(scope.namespace, input, epoch, now);
      return [{ kind: 'output', output }];
    });
    const { content: _content, ...info } = output as OutputRecord;
    return info;
  }

  /** Sets (creates or replaces) a pointer. */
  async setPointer(scope: WriteScope, name: string, input: PointerInput): Promise<PointerRecord> {
    let pointer: PointerRecord | undefined;
    await this.#write(scope, (epoch, now) => {
      pointer = {
        namespace: scope.namespace,
        name,
        type: input.type,
        fields: input.fields,
        note: input.note ?? null,
        updatedAt: now,
        epoch,
      };
      return [{ kind: 'put_pointer', pointer }];
    });
    return pointer as PointerRecord;
  }

  /** Removes a pointer; false when there was none. */
  async removePointer(scope: WriteScope, name: string): Promise<boolean> {
    const results = await this.#write(scope, () => [{ kind: 'delete_pointer', namespace: scope.namespace, name }]);
    return ((results as ResumeWriteResult[])[0] as { deleted: boolean }).deleted;
  }

  workingState(namespace: string): Promise<WorkingStateRecord | null> {
    return this.#store.workingState(namespace);
  }

  workingStateHistory(namespace: string, limit: number, beforeVersion?: number): Promise<WorkingStateRecord[]> {
    return this.#store.workingStateHistory(namespace, limit, beforeVersion);
  }

  milestones(namespace: string, limit: number, beforeSeq?: number): Promise<MilestoneRecord[]> {
    return this.#store.milestones(namespace, limit, beforeSeq);
  }

  turns(namespace: string, limit: number, beforeSeq?: number): Promise<TurnRecord[]> {
    return this.#store.turns({ namespace, limit, beforeSeq });
  }

  countTurns(namespace: string): Promise<number> {
    return this.#store.countTurns(namespace);
  }

  countOutputs(namespace: string): Promise<number> {
    return this.#store.countOutputs(namespace);
  }

  output(namespace: string, ref: string): Promise<OutputRecord | null> {
    return this.#store.output(namespace, ref);
  }

  outputs(namespace: string, limit: number, beforeRef?: string): Promise<OutputInfo[]> {
    return this.#store.outputs(namespace, limit, beforeRef);
  }

  pointers(namespace: string, limit: number, afterName?: string): Promise<PointerRecord[]> {
    return this.#store.pointers(namespace, limit, afterName);
  }
}

/** @throws {TetherError} 413 `too_large` naming `field` when `content` is above 1 MiB */
function checkOutputSize(content: string, field: string): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_OUTPUT_BYTES) {
    throw new TetherError(
      'too_large',
      `${field}: is ${bytes} bytes; an output holds at most ${MAX_OUTPUT_BYTES} (1 MiB)`,
      {
        field,
      },
    );
  }
}

/** A new output record with a fresh time-ordered ref (`out_…`). */
function outputRecord(namespace: string, input: OutputInput, epoch: number, now: number): OutputRecord {
  return {
    namespace,
    ref: `out_${newEventId(now).slice(3)}`,
    content: input.content,
    tool: input.tool ?? null,
    summary: input.summary ?? null,
    bytes: Buffer.byteLength(input.content, 'utf8'),
    at: now,
    epoch,
  };
}
