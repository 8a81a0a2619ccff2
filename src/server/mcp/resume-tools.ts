/**
 * @module
 * The resume tools agents call over MCP: agent_resume, update_working_state, agent_milestone,
 * record_turn, recent_turns, store_output, fetch_output, set_pointer, remove_pointer, list_pointers.
 * Each calls the same resume call as its HTTP route (`calls/resume-calls.ts`). The lease belongs to
 * the MCP session: `agent_resume` takes it, writes carry its epoch (renewed as they come), and the
 * model never passes an epoch. Used by `mcp-route.ts`.
 */
import { z } from 'zod';
import type { AuthContext } from '../../auth/auth-context.ts';
import { resolveNamespace } from '../../auth/auth-context.ts';
import type { Clock } from '../../common/clock.ts';
import { invalidRequest, isTetherError, TetherError } from '../../common/errors.ts';
import { DEFAULT_TTL_MS } from '../../memory/resume/leases.ts';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import { namespaceText } from '../schemas/common.ts';
import {
  milestoneBody,
  outputBody,
  outputParams,
  pointerBody,
  pointerName,
  resumeBody,
  turnBody,
  workingStatePatch,
} from '../schemas/resume.ts';
import type { McpSessionContext, SessionLease } from './sessions.ts';
import { defineTool, type MemoryTool } from './tools.ts';

/** What the resume tools call. */
export interface ResumeToolDeps {
  calls: ResumeCalls;
  clock: Clock;
}

const ns = { namespace: namespaceText.optional() };

/** `agent_resume`: as `POST /v1/resume`, without a holder (the holder is the MCP session). */
export const resumeArgs = resumeBody.omit({ holder: true });
/** `recent_turns`: `GET /v1/turns` with JSON numbers. */
export const recentTurnsArgs = z.strictObject({
  ...ns,
  limit: z.number().int().min(1).max(1000).optional(),
  before_seq: z.number().int().min(1).optional(),
});
/** `fetch_output`. */
export const fetchOutputArgs = z.strictObject({ ...ns, ref: outputParams.shape.ref });
/** `set_pointer`: the name and the pointer body. */
export const setPointerArgs = pointerBody.extend({ name: pointerName });
/** `remove_pointer`. */
export const removePointerArgs = z.strictObject({ ...ns, name: pointerName });
/** `list_pointers`. */
export const listPointersArgs = z.strictObject({
  ...ns,
  limit: z.number().int().min(1).max(1000).optional(),
  after: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/)
    .optional(),
});

/**
 * The session's epoch for a write to the call's namespace, renewed when a third of its TTL has
 * passed; undefined when the session holds no lease of that namespace.
 */
async function sessionEpoch(
  deps: ResumeToolDeps,
  auth: AuthContext,
  session: McpSessionContext | null | undefined,
  named: string | undefined,
): Promise<number | undefined> {
  const lease = session?.lease;
  if (!lease || lease.namespace !== resolveNamespace(auth, named)) return undefined;
  const now = deps.clock.now();
  if (lease.expiresAt - now < (lease.ttlMs * 2) / 3) {
    try {
      const renewed = await deps.calls.renew(auth, {
        namespace: lease.namespace,
        epoch: lease.epoch,
        ttl_ms: lease.ttlMs,
      });
      lease.expiresAt = Date.parse(renewed.expires_at ?? '') || lease.expiresAt;
    } catch (err) {
      // A lost lease stays in the session: the write answers lease_lost, telling the model to resume.
      if (!(isTetherError(err) && (err.code === 'lease_lost' || err.code === 'lease_not_held'))) throw err;
    }
  }
  return lease.epoch;
}

/**
 * Whether the session's lease is still the namespace's live lease. The session's own `expiresAt` is
 * only what it last saw: the lease may since have been released over HTTP or taken by another holder.
 */
async function stillHeld(deps: ResumeToolDeps, auth: AuthContext, lease: SessionLease): Promise<boolean> {
  if (lease.expiresAt <= deps.clock.now()) return false;
  const now = await deps.calls.lease(auth, { namespace: lease.namespace });
  return now.held && now.epoch === lease.epoch;
}

/** A write tool: the session's epoch, and MCP wording for a missing lease. */
function writeTool<S extends z.ZodObject>(
  deps: ResumeToolDeps,
  name: string,
  description: string,
  schema: S,
  run: (auth: AuthContext, epoch: number | undefined, input: z.output<S>) => Promise<object>,
): MemoryTool {
  return defineTool(name, description, schema, async (auth, input, session) => {
    const epoch = await sessionEpoch(deps, auth, session, (input as { namespace?: string }).namespace);
    try {
      return await run(auth, epoch, input);
    } catch (err) {
      if (isTetherError(err) && err.code === 'lease_not_held') {
        throw new TetherError(
          'lease_not_held',
          session
            ? 'this MCP session holds no lease: call agent_resume first (it takes the lease for this session)'
            : 'this MCP request has no session: initialize an MCP session, then call agent_resume',
        );
      }
      if (isTetherError(err) && err.code === 'lease_lost') {
        throw new TetherError(
          'lease_lost',
          `${err.message}. Another copy of this agent took over: call agent_resume to continue`,
        );
      }
      throw err;
    }
  });
}

/**
 * Builds the ten resume tools over the resume calls.
 * @example
 * const tools = resumeTools({ calls: resumeCalls({ records, leases, resumer, clock }), clock });
 */
export function resumeTools(deps: ResumeToolDeps): MemoryTool[] {
  const { calls } = deps;
  return [
    defineTool(
      'agent_resume',
      'Call this first. Resumes this agent where it stopped: takes the lease for this MCP session (so your ' +
        'later writes are fenced; another copy of the agent cannot write over you) and returns your working ' +
        'state, pointers, recent turns, stored outputs, matching memories and a briefing text within ' +
        'token_budget (default 8000, at least 500). defer: true only reads, without the lease.',
      resumeArgs,
      async (auth, input, session) => {
        if (!session && !input.defer) {
          throw invalidRequest(
            'defer',
            'agent_resume holds the lease for an MCP session: initialize one, or pass defer: true',
          );
        }
        const namespace = resolveNamespace(auth, input.namespace);
        const held = session?.lease && (await stillHeld(deps, auth, session.lease)) ? session.lease : null;
        if (held && held.namespace === namespace) {
          const answer = await calls.resume(auth, { ...input, defer: true });
          return { ...answer, epoch: held.epoch };
        }
        if (held && !input.defer) {
          // One lease per session: taking this one would leave the other held, unrenewed and unreleased.
          throw invalidRequest(
            'namespace',
            `this MCP session holds the lease of ${held.namespace}: resume ${namespace} in an MCP session of its own, or pass defer: true`,
          );
        }
        // No lease, or one lost (released, lapsed, taken over): take it again, as POST /v1/resume
        // would (409 lease_held while another holds it; the lost lease stays, so writes say lease_lost).
        const answer = await calls.resume(auth, { ...input, holder: session ? `mcp:${session.id}` : undefined });
        if (session && answer.epoch !== null) {
          session.lease = {
            namespace: answer.namespace,
            epoch: answer.epoch,
            ttlMs: input.lease_ttl_ms ?? DEFAULT_TTL_MS,
            expiresAt: Date.parse(answer.lease.expires_at ?? '') || deps.clock.now(),
          };
        }
        return answer;
      },
    ),
    writeTool(
      deps,
      'update_working_state',
      'Save your working state: goal, plan (list), progress, focus, decisions (list), open_questions (list), ' +
        'notes, step (integer). Only the fields you pass change (lists are replaced whole; null clears). ' +
        'Returns the new version.',
      workingStatePatch,
      (auth, epoch, input) => calls.patchWorkingState(auth, epoch, input),
    ),
    writeTool(
      deps,
      'agent_milestone',
      'Record a milestone you reached (name, optional progress); it becomes last_milestone.',
      milestoneBody,
      (auth, epoch, input) => calls.addMilestone(auth, epoch, input),
    ),
    writeTool(
      deps,
      'record_turn',
      'Record one conversation turn: role (system, user, assistant or tool), content, optional name, ' +
        'message_id (a retry with the same id is not stored twice) and a one-line brief. Very long content ' +
        'is kept whole as an output; the turn keeps its opening and the output ref.',
      turnBody,
      (auth, epoch, input) => calls.recordTurn(auth, epoch, input),
    ),
    defineTool(
      'recent_turns',
      'Read recorded turns, oldest first within the page: the newest limit (default 100) before before_seq; next is the before_seq of the page before.',
      recentTurnsArgs,
      (auth, input) => calls.turns(auth, input),
    ),
    writeTool(
      deps,
      'store_output',
      'Store a large tool output (at most 1 MiB) by reference, with the tool name and a summary; returns its ref.',
      outputBody,
      (auth, epoch, input) => calls.storeOutput(auth, epoch, input),
    ),
    defineTool(
      'fetch_output',
      'Fetch a stored output by its ref (out_…), with its whole content.',
      fetchOutputArgs,
      (auth, input) => calls.output(auth, input),
    ),
    writeTool(
      deps,
      'set_pointer',
      'Point to where your work lives, by name: type git_ref, object, env, external or process, with ' +
        'string fields (e.g. {"repo": "...", "ref": "..."}) and an optional note. Replaces a pointer of the same name.',
      setPointerArgs,
      (auth, epoch, input) => calls.setPointer(auth, epoch, input),
    ),
    writeTool(deps, 'remove_pointer', 'Remove a pointer by name.', removePointerArgs, (auth, epoch, input) =>
      calls.removePointer(auth, epoch, input),
    ),
    defineTool(
      'list_pointers',
      'List your pointers, by name: limit (default 100) after the name after; next is the after of the following page.',
      listPointersArgs,
      (auth, input) => calls.pointers(auth, input),
    ),
  ];
}
