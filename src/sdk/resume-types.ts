/**
 * @module
 * Wire types of the resume API as the SDK sees them: working state, milestones, turns, outputs,
 * pointers, the lease and the resume answer (snake_case, ISO times).
 */
import type { BeliefJson } from './types.ts';

/** A lease as the server reports it. */
export interface LeaseJson {
  namespace: string;
  /** Live now. */
  held: boolean;
  holder: string | null;
  epoch: number | null;
  acquired_at: string | null;
  expires_at: string | null;
  /** The lease's TTL, ms: what a renew without `ttl_ms` extends it by. */
  ttl_ms: number | null;
}

/** The writable working-state fields (a patch names any of them; null clears a text field). */
export interface WorkingStatePatch {
  goal?: string | null;
  plan?: string[];
  progress?: string | null;
  focus?: string | null;
  decisions?: string[];
  open_questions?: string[];
  notes?: string | null;
  step?: number | null;
  last_milestone?: string | null;
}

/** A working state version (version 0 before the first write). */
export interface WorkingStateJson extends Required<WorkingStatePatch> {
  namespace: string;
  version: number;
  updated_at: string | null;
}

export interface MilestoneJson {
  seq: number;
  name: string;
  progress: string | null;
  at: string;
}

export type TurnRole = 'system' | 'user' | 'assistant' | 'tool';

/** A turn to record. */
export interface TurnInput {
  role: TurnRole;
  content: string;
  name?: string;
  /** A retry with the same id is not stored twice. */
  message_id?: string;
  brief?: string;
}

export interface TurnJson {
  seq: number;
  role: TurnRole;
  content: string;
  name: string | null;
  message_id: string | null;
  brief: string | null;
  /** The output holding the whole content when it was too large for a turn. */
  output_ref: string | null;
  at: string;
  epoch: number;
}

export interface RecordTurnJson {
  seq: number;
  /** The message id was stored already; nothing new was stored. */
  duplicate: boolean;
  output_ref: string | null;
}

export interface OutputInfoJson {
  ref: string;
  tool: string | null;
  summary: string | null;
  bytes: number;
  at: string;
}

export interface OutputJson extends OutputInfoJson {
  content: string;
}

export type PointerType = 'git_ref' | 'object' | 'env' | 'external' | 'process';

export interface PointerInput {
  type: PointerType;
  fields: Record<string, string>;
  note?: string;
}

export interface PointerJson {
  name: string;
  type: PointerType;
  fields: Record<string, string>;
  note: string | null;
  updated_at: string;
}

/** The answer of `POST /v1/resume`. */
export interface ResumeJson {
  agent: string;
  namespace: string;
  /** No working state and no turns yet. */
  fresh: boolean;
  /** The lease taken (null with defer). */
  epoch: number | null;
  lease: LeaseJson;
  working_state: WorkingStateJson;
  pointers: PointerJson[];
  recent_turns: TurnJson[];
  outputs: OutputInfoJson[];
  memories: BeliefJson[];
  omitted: { turns: number; memories: number; outputs: number };
  /** Estimated tokens of the briefing. */
  tokens: number;
  briefing: string;
}
