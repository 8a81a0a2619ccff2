/**
 * @module
 * Row <-> record mapping of the resume tables, shared by the SQLite (schema 005) and PostgreSQL
 * (schema 002) drivers: snake_case columns, JSON text for a working state's fields and a pointer's fields.
 */
import type {
  LeaseRecord,
  MilestoneRecord,
  OutputRecord,
  PointerRecord,
  PointerType,
  TurnRecord,
  TurnRole,
  WorkingStateFields,
  WorkingStateRecord,
} from './resume-types.ts';

export interface LeaseRow {
  namespace: string;
  holder: string;
  epoch: number;
  acquired_at: number;
  expires_at: number;
  ttl_ms: number;
}

export interface WorkingStateRow {
  namespace: string;
  version: number;
  state: string;
  updated_at: number;
  epoch: number;
}

/** A `milestones` row: its columns have the record's names (single words). */
export type MilestoneRow = MilestoneRecord;

export interface TurnRow {
  namespace: string;
  seq: number;
  role: string;
  content: string;
  name: string | null;
  message_id: string | null;
  brief: string | null;
  output_ref: string | null;
  at: number;
  epoch: number;
}

export interface OutputRow {
  namespace: string;
  ref: string;
  content: string;
  tool: string | null;
  summary: string | null;
  bytes: number;
  at: number;
  epoch: number;
}

export interface PointerRow {
  namespace: string;
  name: string;
  type: string;
  fields: string;
  note: string | null;
  updated_at: number;
  epoch: number;
}

export function leaseFromRow(r: LeaseRow): LeaseRecord {
  return {
    namespace: r.namespace,
    holder: r.holder,
    epoch: r.epoch,
    acquiredAt: r.acquired_at,
    expiresAt: r.expires_at,
    ttlMs: r.ttl_ms,
  };
}

/** The fields of a working state, without its key and bookkeeping (what the `state` column holds). */
export function stateFields(s: WorkingStateFields): WorkingStateFields {
  return {
    goal: s.goal,
    plan: s.plan,
    progress: s.progress,
    focus: s.focus,
    decisions: s.decisions,
    openQuestions: s.openQuestions,
    notes: s.notes,
    step: s.step,
    lastMilestone: s.lastMilestone,
  };
}

export function workingStateFromRow(r: WorkingStateRow): WorkingStateRecord {
  return {
    namespace: r.namespace,
    version: r.version,
    ...stateFields(JSON.parse(r.state) as WorkingStateFields),
    updatedAt: r.updated_at,
    epoch: r.epoch,
  };
}

export function milestoneFromRow(r: MilestoneRow): MilestoneRecord {
  return { namespace: r.namespace, seq: r.seq, name: r.name, progress: r.progress, at: r.at, epoch: r.epoch };
}

export function turnFromRow(r: TurnRow): TurnRecord {
  return {
    namespace: r.namespace,
    seq: r.seq,
    role: r.role as TurnRole,
    content: r.content,
    name: r.name,
    messageId: r.message_id,
    brief: r.brief,
    outputRef: r.output_ref,
    at: r.at,
    epoch: r.epoch,
  };
}

export function outputFromRow(r: OutputRow): OutputRecord {
  return {
    namespace: r.namespace,
    ref: r.ref,
    tool: r.tool,
    summary: r.summary,
    bytes: r.bytes,
    at: r.at,
    epoch: r.epoch,
    content: r.content,
  };
}

export function pointerFromRow(r: PointerRow): PointerRecord {
  return {
    namespace: r.namespace,
    name: r.name,
    type: r.type as PointerType,
    fields: JSON.parse(r.fields) as Record<string, string>,
    note: r.note,
    updatedAt: r.updated_at,
    epoch: r.epoch,
  };
}

/** A pointer's values in the `pointers` columns' order: namespace, name, type, fields, note, updated_at, epoch. */
export function pointerArgs(p: PointerRecord): unknown[] {
  return [p.namespace, p.name, p.type, JSON.stringify(p.fields), p.note, p.updatedAt, p.epoch];
}
