/**
 * @module
 * The resume calls — working state, milestones, turns, outputs, pointers, resume, lease — as one
 * module the HTTP routes (`routes/resume.ts`, `routes/lease.ts`) and the MCP resume tools both call.
 * Input is parsed already (Zod). Here: tenancy (`resolveNamespace`), the writer's epoch (from
 * `X-Lease-Epoch`, or the MCP session's lease), the engine call, and the wire shape.
 */
import { type AuthContext, resolveNamespace } from '../../auth/auth-context.ts';
import type { Clock } from '../../common/clock.ts';
import { notFound } from '../../common/errors.ts';
import type { Leases } from '../../memory/resume/leases.ts';
import type { ResumeRecords } from '../../memory/resume/records.ts';
import type { Resumer } from '../../memory/resume/resume.ts';
import type { WorkingStatePatch } from '../../memory/resume/working-state.ts';
import type { PointerType, TurnRole } from '../../store/resume-types.ts';
import {
  leaseJson,
  milestoneJson,
  outputInfoJson,
  outputJson,
  pointerJson,
  turnJson,
  workingStateJson,
} from '../resume-wire.ts';
import { beliefJson } from '../wire.ts';

/** What the resume calls use. */
export interface ResumeCallDeps {
  records: ResumeRecords;
  leases: Leases;
  resumer: Resumer;
  clock: Clock;
}

/** A call's optional namespace (default: the key's own). */
interface InNamespace {
  namespace?: string;
}

/** The writer's lease epoch: from `X-Lease-Epoch`, or the MCP session; undefined when none. */
export type Epoch = number | undefined;

/** The default lease holder of a key: its session (pod or instance name), else `key:<id>`. */
export function defaultHolder(auth: AuthContext): string {
  return auth.session ?? `key:${auth.keyId}`;
}

/** The wire working-state patch -> the engine's. */
function patchOf(b: Record<string, unknown>): WorkingStatePatch {
  const map: Record<string, keyof WorkingStatePatch> = {
    goal: 'goal',
    plan: 'plan',
    progress: 'progress',
    focus: 'focus',
    decisions: 'decisions',
    open_questions: 'openQuestions',
    notes: 'notes',
    step: 'step',
    last_milestone: 'lastMilestone',
  };
  const patch: Record<string, unknown> = {};
  for (const [wire, field] of Object.entries(map)) if (b[wire] !== undefined) patch[field] = b[wire];
  return patch as WorkingStatePatch;
}

/** The resume calls over `deps`. */
export function resumeCalls(deps: ResumeCallDeps) {
  const { records, leases, resumer, clock } = deps;
  const scope = (auth: AuthContext, named: string | undefined, epoch: Epoch) => ({
    namespace: resolveNamespace(auth, named),
    epoch,
  });
  return {
    async workingState(auth: AuthContext, q: InNamespace) {
      const ns = resolveNamespace(auth, q.namespace);
      return workingStateJson(ns, await records.workingState(ns));
    },

    async workingStateHistory(auth: AuthContext, q: InNamespace & { limit?: number; before_version?: number }) {
      const ns = resolveNamespace(auth, q.namespace);
      const limit = q.limit ?? 20;
      const { rows, more } = page(await records.workingStateHistory(ns, limit + 1, q.before_version), limit);
      return { versions: rows.map((v) => workingStateJson(ns, v)), next: more ? (rows.at(-1)?.version ?? null) : null };
    },

    async patchWorkingState(auth: AuthContext, epoch: Epoch, body: InNamespace & Record<string, unknown>) {
      const s = scope(auth, body.namespace, epoch);
      return workingStateJson(s.namespace, await records.patchWorkingState(s, patchOf(body)));
    },

    async addMilestone(auth: AuthContext, epoch: Epoch, body: InNamespace & { name: string; progress?: string }) {
      const s = scope(auth, body.namespace, epoch);
      const { milestone, state } = await records.addMilestone(s, { name: body.name, progress: body.progress });
      return { milestone: milestoneJson(milestone), working_state: workingStateJson(s.namespace, state) };
    },

    async milestones(auth: AuthContext, q: InNamespace & { limit?: number; before_seq?: number }) {
      const ns = resolveNamespace(auth, q.namespace);
      const limit = q.limit ?? DEFAULT_PAGE;
      // Oldest first within the page: the extra (older) row is the first one.
      const { rows, more } = pageBackwards(await records.milestones(ns, limit + 1, q.before_seq), limit);
      return { milestones: rows.map(milestoneJson), next: more ? (rows[0]?.seq ?? null) : null };
    },

    async recordTurn(
      auth: AuthContext,
      epoch: Epoch,
      b: InNamespace & { role: TurnRole; content: string; name?: string; message_id?: string; brief?: string },
    ) {
      const s = scope(auth, b.namespace, epoch);
      const r = await records.recordTurn(s, {
        role: b.role,
        content: b.content,
        name: b.name,
        messageId: b.message_id,
        brief: b.brief,
      });
      return { seq: r.seq, duplicate: r.duplicate, output_ref: r.outputRef };
    },

    async turns(auth: AuthContext, q: InNamespace & { limit?: number; before_seq?: number }) {
      const ns = resolveNamespace(auth, q.namespace);
      const limit = q.limit ?? DEFAULT_PAGE;
      const [turns, total] = await Promise.all([records.turns(ns, limit + 1, q.before_seq), records.countTurns(ns)]);
      const { rows, more } = pageBackwards(turns, limit);
      return { turns: rows.map(turnJson), total, next: more ? (rows[0]?.seq ?? null) : null };
    },

    async storeOutput(
      auth: AuthContext,
      epoch: Epoch,
      b: InNamespace & { content: string; tool?: string; summary?: string },
    ) {
      const s = scope(auth, b.namespace, epoch);
      return outputInfoJson(await records.storeOutput(s, { content: b.content, tool: b.tool, summary: b.summary }));
    },

    async output(auth: AuthContext, q: InNamespace & { ref: string }) {
      const ns = resolveNamespace(auth, q.namespace);
      const found = await records.output(ns, q.ref);
      if (!found) throw notFound(`output ${q.ref}`);
      return outputJson(found);
    },

    async outputs(auth: AuthContext, q: InNamespace & { limit?: number; before?: string }) {
      const ns = resolveNamespace(auth, q.namespace);
      const limit = q.limit ?? DEFAULT_PAGE;
      const { rows, more } = page(await records.outputs(ns, limit + 1, q.before), limit);
      return { outputs: rows.map(outputInfoJson), next: more ? (rows.at(-1)?.ref ?? null) : null };
    },

    async setPointer(
      auth: AuthContext,
      epoch: Epoch,
      b: InNamespace & { name: string; type: PointerType; fields: Record<string, string>; note?: string },
    ) {
      const s = scope(auth, b.namespace, epoch);
      return pointerJson(await records.setPointer(s, b.name, { type: b.type, fields: b.fields, note: b.note }));
    },

    /** @throws {TetherError} 404 when there is no such pointer (nothing was removed) */
    async removePointer(auth: AuthContext, epoch: Epoch, b: InNamespace & { name: string }) {
      const s = scope(auth, b.namespace, epoch);
      if (!(await records.removePointer(s, b.name))) throw notFound(`pointer ${b.name}`);
      return { removed: b.name };
    },

    async pointers(auth: AuthContext, q: InNamespace & { limit?: number; after?: string }) {
      const ns = resolveNamespace(auth, q.namespace);
      const limit = q.limit ?? DEFAULT_PAGE;
      const { rows, more } = page(await records.pointers(ns, limit + 1, q.after), limit);
      return { pointers: rows.map(pointerJson), next: more ? (rows.at(-1)?.name ?? null) : null };
    },

    async resume(
      auth: AuthContext,
      b: InNamespace & { token_budget?: number; lease_ttl_ms?: number; holder?: string; defer?: boolean },
    ) {
      const ns = resolveNamespace(auth, b.namespace);
      const r = await resumer.resume({
        namespace: ns,
        holder: b.holder ?? defaultHolder(auth),
        tokenBudget: b.token_budget,
        leaseTtlMs: b.lease_ttl_ms,
        defer: b.defer,
      });
      return {
        agent: ns.slice(ns.indexOf(':') + 1),
        namespace: ns,
        fresh: r.fresh,
        epoch: r.taken?.epoch ?? null,
        lease: leaseJson(ns, r.lease, clock.now()),
        working_state: workingStateJson(ns, r.state),
        pointers: r.pointers.map(pointerJson),
        recent_turns: r.briefing.turns.map(turnJson),
        outputs: r.briefing.outputs.map(outputInfoJson),
        memories: r.briefing.memories.map(beliefJson),
        omitted: r.briefing.omitted,
        tokens: r.briefing.tokens,
        briefing: r.briefing.text,
      };
    },

    async lease(auth: AuthContext, q: InNamespace) {
      const ns = resolveNamespace(auth, q.namespace);
      return leaseJson(ns, await leases.latest(ns), clock.now());
    },

    async acquire(auth: AuthContext, b: InNamespace & { holder?: string; ttl_ms?: number }) {
      const ns = resolveNamespace(auth, b.namespace);
      const lease = await leases.acquire(ns, b.holder ?? defaultHolder(auth), b.ttl_ms);
      return leaseJson(ns, lease, clock.now());
    },

    async renew(auth: AuthContext, b: InNamespace & { epoch: number; ttl_ms?: number }) {
      const ns = resolveNamespace(auth, b.namespace);
      return leaseJson(ns, await leases.renew(ns, b.epoch, b.ttl_ms), clock.now());
    },

    async release(auth: AuthContext, b: InNamespace & { epoch: number }) {
      const ns = resolveNamespace(auth, b.namespace);
      return leaseJson(ns, await leases.release(ns, b.epoch), clock.now());
    },
  };
}

/** The resume calls, as `resumeCalls` builds them. */
export type ResumeCalls = ReturnType<typeof resumeCalls>;

/** Rows of a list page when no `limit` is given (`limit` is at most 1,000 on every list). */
export const DEFAULT_PAGE = 100;

/** A page read with one row more than `limit`, in its order: the extra row says there is more. */
function page<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return rows.length > limit ? { rows: rows.slice(0, limit), more: true } : { rows, more: false };
}

/** As `page`, for lists read newest first and answered oldest first: the extra row is the first. */
function pageBackwards<T>(rows: T[], limit: number): { rows: T[]; more: boolean } {
  return rows.length > limit ? { rows: rows.slice(rows.length - limit), more: true } : { rows, more: false };
}
