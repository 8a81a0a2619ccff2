/**
 * @module
 * The resume-records port of a `Store` (`store.ts`): fenced writes of working states, milestones,
 * turns, outputs, pointers and LangGraph checkpoints under a namespace's lease (`lease-store.ts`),
 * their reads, and their export and import. Used by `memory/resume/` (records, checkpoints) and the
 * export/import routes. Records: `resume-types.ts`, `checkpoint-types.ts`.
 */
import type { CheckpointReads } from './checkpoint-types.ts';
import type {
  Fence,
  Fenced,
  MilestoneRecord,
  OutputInfo,
  OutputRecord,
  PointerRecord,
  ResumeExportQuery,
  ResumeRecordLine,
  ResumeWrite,
  ResumeWriteResult,
  TurnQuery,
  TurnRecord,
  WorkingStateRecord,
} from './resume-types.ts';

/** Resume records and checkpoints of agent namespaces. All methods are safe to call concurrently. */
export interface ResumeStore extends CheckpointReads {
  /**
   * The fenced write: checks that `fence.epoch` is the namespace's live lease at `fence.now` and
   * applies every write, in one transaction — all or none, nothing stored from a stale writer.
   * Every write must be of `fence.namespace`.
   * @returns one result per write, in order; or the refusal and the lease as it stands
   */
  writeResume(fence: Fence, writes: ResumeWrite[]): Promise<Fenced<ResumeWriteResult[]>>;
  /** The latest working state, or null when none was written. */
  workingState(namespace: string): Promise<WorkingStateRecord | null>;
  /** Working-state versions, newest first: the `limit` latest below `beforeVersion` (all when absent). */
  workingStateHistory(namespace: string, limit: number, beforeVersion?: number): Promise<WorkingStateRecord[]>;
  /** The latest `limit` milestones below `beforeSeq` (all when absent), oldest first. */
  milestones(namespace: string, limit: number, beforeSeq?: number): Promise<MilestoneRecord[]>;
  /** The newest `limit` turns below `beforeSeq`, oldest first. */
  turns(query: TurnQuery): Promise<TurnRecord[]>;
  /** How many turns the namespace has. */
  countTurns(namespace: string): Promise<number>;
  /** One output with its content, or null. */
  output(namespace: string, ref: string): Promise<OutputRecord | null>;
  /** The latest `limit` outputs without content, newest first; only refs below `beforeRef` when given. */
  outputs(namespace: string, limit: number, beforeRef?: string): Promise<OutputInfo[]>;
  /** How many outputs the namespace has. */
  countOutputs(namespace: string): Promise<number>;
  /** The first `limit` pointers of the namespace by name, after `afterName` when given. */
  pointers(namespace: string, limit: number, afterName?: string): Promise<PointerRecord[]>;
  /**
   * Every resume record matching `query` (no leases), read page by page: working states, milestones,
   * turns, outputs, pointers, checkpoints, checkpoint writes, each kind in its order. Safe to interleave with writes.
   */
  exportResume(query: ResumeExportQuery): AsyncIterable<ResumeRecordLine>;
  /**
   * Inserts records keeping their version / seq / ref / name; a record whose key is present is
   * skipped (not fenced: an admin restore). A turn whose `messageId` is present is skipped too.
   * @returns how many were inserted
   */
  importResume(records: ResumeRecordLine[]): Promise<number>;
}
