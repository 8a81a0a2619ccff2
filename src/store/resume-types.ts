/**
 * @module
 * The resume records a `Store` keeps per agent namespace — lease, working-state versions, milestones,
 * turns, outputs, pointers — and the fenced-write types. Plain data: merging, budgets and validation
 * live in `memory/resume/`. Every time is epoch milliseconds; every write is fenced by a lease epoch.
 * LangGraph checkpoints are resume records too (`checkpoint-types.ts`).
 */
import type { CheckpointRecord, CheckpointWriteRecord } from './checkpoint-types.ts';

/** The lease on a namespace's resume records: one writer at a time. */
export interface LeaseRecord {
  /** `tenant:agent`. */
  namespace: string;
  /** Who holds it (free text, e.g. a pod name or an MCP session id). */
  holder: string;
  /**
   * Fencing token: a store-wide counter, so it only ever grows — across release, expiry, restart,
   * and a purge of the namespace (which erases this row, not the counter).
   */
  epoch: number;
  /** Epoch ms the lease was acquired. */
  acquiredAt: number;
  /** Epoch ms from which the lease has lapsed (renew moves it; release sets it to the release time). */
  expiresAt: number;
  /** Life the lease was taken with, ms, or last renewed with: what a renew that names none gives it. */
  ttlMs: number;
}

/** What a write is fenced by: the caller's epoch, checked against the namespace's lease at `now`. */
export interface Fence {
  namespace: string;
  /** The epoch the writer was given by acquire. */
  epoch: number;
  /** Epoch ms; the lease must expire after it. */
  now: number;
}

/**
 * Why a fenced call did nothing: `not_held` — the namespace has no lease at all; `lost` — a later
 * epoch was issued, or this one lapsed or was released; `conflict` — a working-state write expected a
 * version that is no longer the latest (re-read and merge again).
 */
export type FenceRefusal = 'not_held' | 'lost' | 'conflict';

/** The answer of a fenced call: done with a value, or refused with nothing written. */
export type Fenced<T> = { ok: true; value: T } | { ok: false; reason: FenceRefusal; lease: LeaseRecord | null };

/** The answer of an acquire: a new lease, or the live lease of another acquire. */
export type LeaseAcquire = { acquired: true; lease: LeaseRecord } | { acquired: false; held: LeaseRecord };

/** The fields of a working state (all optional on the wire; stored whole). */
export interface WorkingStateFields {
  goal: string | null;
  plan: string[];
  progress: string | null;
  focus: string | null;
  decisions: string[];
  openQuestions: string[];
  notes: string | null;
  /** The agent's own step counter (an integer >= 0), or null. */
  step: number | null;
  /** Name of the latest milestone (set by milestones). */
  lastMilestone: string | null;
}

/** One stored version of a namespace's working state. */
export interface WorkingStateRecord extends WorkingStateFields {
  namespace: string;
  /** 1, 2, 3…: each write adds the next version; earlier ones stay readable. */
  version: number;
  /** Epoch ms of the write. */
  updatedAt: number;
  /** Lease epoch of the writer. */
  epoch: number;
}

/** A milestone, numbered in the order recorded. */
export interface MilestoneRecord {
  namespace: string;
  /** 1, 2, 3… per namespace. */
  seq: number;
  name: string;
  progress: string | null;
  /** Epoch ms. */
  at: number;
  epoch: number;
}

/** Turn roles. */
export type TurnRole = 'system' | 'user' | 'assistant' | 'tool';

/** One turn of the agent's conversation. */
export interface TurnRecord {
  namespace: string;
  /** 1, 2, 3… per namespace, in the order stored. */
  seq: number;
  role: TurnRole;
  /** The content, or its opening when the whole of it went to an output (`outputRef`). */
  content: string;
  /** Tool or participant name. */
  name: string | null;
  /** Client-chosen id: a turn with a `messageId` already stored is not stored again. */
  messageId: string | null;
  /** A one-line summary the briefing may show instead of the content. */
  brief: string | null;
  /** The output holding the whole content, when it was too large for a turn. */
  outputRef: string | null;
  /** Epoch ms. */
  at: number;
  epoch: number;
}

/** A stored output without its content (listings). */
export interface OutputInfo {
  namespace: string;
  /** `out_…`, time-ordered. */
  ref: string;
  tool: string | null;
  summary: string | null;
  /** Length of the content in UTF-8 bytes. */
  bytes: number;
  /** Epoch ms. */
  at: number;
  epoch: number;
}

/** A stored output (a large tool result, kept by reference). */
export interface OutputRecord extends OutputInfo {
  content: string;
}

/** Pointer kinds: where the agent's work lives. */
export type PointerType = 'git_ref' | 'object' | 'env' | 'external' | 'process';

/** A named pointer to the agent's work. */
export interface PointerRecord {
  namespace: string;
  name: string;
  type: PointerType;
  /** Kind-specific fields, e.g. `{repo, ref}` for a git ref. */
  fields: Record<string, string>;
  note: string | null;
  /** Epoch ms. */
  updatedAt: number;
  epoch: number;
}

/**
 * One write of a fenced batch. `working_state` stores `state` as a new version only when the latest
 * stored version is `state.version - 1` (0: none yet); otherwise the batch is refused with `conflict`.
 */
export type ResumeWrite =
  | { kind: 'working_state'; state: WorkingStateRecord }
  | { kind: 'milestone'; milestone: Omit<MilestoneRecord, 'seq'> }
  | { kind: 'turn'; turn: Omit<TurnRecord, 'seq'>; output?: OutputRecord }
  | { kind: 'output'; output: OutputRecord }
  | { kind: 'put_pointer'; pointer: PointerRecord }
  | { kind: 'delete_pointer'; namespace: string; name: string }
  | { kind: 'put_checkpoint'; checkpoint: CheckpointRecord }
  | { kind: 'put_checkpoint_writes'; namespace: string; writes: CheckpointWriteRecord[] }
  | { kind: 'delete_thread'; namespace: string; threadId: string };

/**
 * The result of each write, in order: the version stored; the milestone's seq; the turn's seq (an
 * earlier turn's when `duplicate`: its `messageId` was stored already, and this one's output was not);
 * the output ref; `deleted` false when there was no such pointer; a checkpoint put replaces one of the
 * same key; the pending writes stored (a repeated task/idx >= 0 is kept as first written); the
 * checkpoints and writes a thread's deletion erased.
 */
export type ResumeWriteResult =
  | { kind: 'working_state'; version: number }
  | { kind: 'milestone'; seq: number }
  | { kind: 'turn'; seq: number; duplicate: boolean }
  | { kind: 'output'; ref: string }
  | { kind: 'put_pointer' }
  | { kind: 'delete_pointer'; deleted: boolean }
  | { kind: 'put_checkpoint' }
  | { kind: 'put_checkpoint_writes'; stored: number }
  | { kind: 'delete_thread'; deleted: number };

/** Which turns to read: the newest `limit` with seq below `beforeSeq`, returned oldest first. */
export interface TurnQuery {
  namespace: string;
  limit: number;
  beforeSeq?: number;
}

/** A resume record as exported and imported (leases are not: they are live state, not history). */
export type ResumeRecordLine =
  | { kind: 'working_state'; record: WorkingStateRecord }
  | { kind: 'milestone'; record: MilestoneRecord }
  | { kind: 'turn'; record: TurnRecord }
  | { kind: 'output'; record: OutputRecord }
  | { kind: 'pointer'; record: PointerRecord }
  | { kind: 'checkpoint'; record: CheckpointRecord }
  | { kind: 'checkpoint_write'; record: CheckpointWriteRecord };

/** Which resume records to export: one namespace, every namespace of a tenant, or all. */
export interface ResumeExportQuery {
  namespace?: string;
  tenant?: string;
}
