/**
 * @module
 * Resume records in their wire shape (snake_case, ISO times). One mapping for the HTTP routes and the
 * MCP tools, through `calls/resume-calls.ts`.
 */
import { EMPTY_STATE } from '../memory/resume/working-state.ts';
import type {
  LeaseRecord,
  MilestoneRecord,
  OutputInfo,
  OutputRecord,
  PointerRecord,
  TurnRecord,
  WorkingStateRecord,
} from '../store/resume-types.ts';
import { iso } from './schemas/common.ts';

/** A lease as the client sees it at `now`; `held` says whether it is live. */
export function leaseJson(namespace: string, lease: LeaseRecord | null, now: number) {
  return {
    namespace,
    held: lease !== null && lease.expiresAt > now,
    holder: lease?.holder ?? null,
    epoch: lease?.epoch ?? null,
    acquired_at: iso(lease?.acquiredAt),
    expires_at: iso(lease?.expiresAt),
    ttl_ms: lease?.ttlMs ?? null,
  };
}

/** A working state (version 0 and empty fields before the first write). */
export function workingStateJson(namespace: string, s: WorkingStateRecord | null) {
  const f = s ?? { ...EMPTY_STATE, version: 0, updatedAt: null };
  return {
    namespace,
    goal: f.goal,
    plan: f.plan,
    progress: f.progress,
    focus: f.focus,
    decisions: f.decisions,
    open_questions: f.openQuestions,
    notes: f.notes,
    step: f.step,
    last_milestone: f.lastMilestone,
    version: f.version,
    updated_at: iso(f.updatedAt),
  };
}

export function milestoneJson(m: MilestoneRecord) {
  return { seq: m.seq, name: m.name, progress: m.progress, at: iso(m.at) as string };
}

export function turnJson(t: TurnRecord) {
  return {
    seq: t.seq,
    role: t.role,
    content: t.content,
    name: t.name,
    message_id: t.messageId,
    brief: t.brief,
    output_ref: t.outputRef,
    at: iso(t.at) as string,
    epoch: t.epoch,
  };
}

export function outputInfoJson(o: OutputInfo) {
  return { ref: o.ref, tool: o.tool, summary: o.summary, bytes: o.bytes, at: iso(o.at) as string };
}

export function outputJson(o: OutputRecord) {
  return { ...outputInfoJson(o), content: o.content };
}

export function pointerJson(p: PointerRecord) {
  return { name: p.name, type: p.type, fields: p.fields, note: p.note, updated_at: iso(p.updatedAt) as string };
}
