/**
 * @module
 * Resume record routes: working state (+ history), milestones, turns, outputs, pointers. Writes carry
 * the lease epoch in `X-Lease-Epoch` and are fenced in the store; reads are open to the agent and to
 * an admin of its tenant (the console). Each route declares its schemas and calls the resume call the
 * MCP tool calls too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import {
  epochHeaders,
  milestoneAnswer,
  milestoneBody,
  milestonesAnswer,
  milestonesQuery,
  namespaceQuery,
  outputAnswer,
  outputBody,
  outputInfoAnswer,
  outputParams,
  outputsAnswer,
  outputsQuery,
  pointerAnswer,
  pointerBody,
  pointerParams,
  pointersAnswer,
  pointersQuery,
  recordTurnAnswer,
  stateHistoryAnswer,
  stateHistoryQuery,
  turnBody,
  turnsAnswer,
  turnsQuery,
  workingStateAnswer,
  workingStatePatch,
} from '../schemas/resume.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';

/** Body limit of turns and outputs, bytes: a 1 MiB content after JSON escaping (the content limit gives 413). */
export const LARGE_BODY_LIMIT = 4 * 1024 * 1024;

/** The writer's epoch from `X-Lease-Epoch` (checked by the route's header schema); undefined when absent. */
export function leaseEpoch(req: FastifyRequest): number | undefined {
  const raw = req.headers['x-lease-epoch'];
  return typeof raw === 'string' ? Number(raw) : undefined;
}

export async function resumeRecordRoutes(app: FastifyInstance, opts: { calls: ResumeCalls }): Promise<void> {
  const { calls } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const fenced = 'Needs the lease: X-Lease-Epoch (409 lease_not_held / lease_lost otherwise).';

  r.get(
    '/v1/working-state',
    { schema: { summary: 'The working state', querystring: namespaceQuery, response: { 200: workingStateAnswer } } },
    async (req) => calls.workingState(req.auth, req.query),
  );
  r.get(
    '/v1/working-state/history',
    {
      schema: {
        summary: 'Earlier working-state versions, newest first',
        querystring: stateHistoryQuery,
        response: { 200: stateHistoryAnswer },
      },
    },
    async (req) => calls.workingStateHistory(req.auth, req.query),
  );
  r.patch(
    '/v1/working-state',
    {
      schema: {
        summary: 'Merge the named fields into the working state (a new version)',
        description: fenced,
        headers: epochHeaders,
        body: workingStatePatch,
        response: { 200: workingStateAnswer },
      },
    },
    async (req) => calls.patchWorkingState(req.auth, leaseEpoch(req), req.body),
  );

  r.post(
    '/v1/milestones',
    {
      schema: {
        summary: 'Record a milestone (sets last_milestone)',
        description: fenced,
        headers: epochHeaders,
        body: milestoneBody,
        response: { 201: milestoneAnswer },
      },
    },
    async (req, reply) => reply.status(201).send(await calls.addMilestone(req.auth, leaseEpoch(req), req.body)),
  );
  r.get(
    '/v1/milestones',
    {
      schema: {
        summary: 'Milestones, a page backwards by seq (oldest first within it)',
        querystring: milestonesQuery,
        response: { 200: milestonesAnswer },
      },
    },
    async (req) => calls.milestones(req.auth, req.query),
  );

  r.post(
    '/v1/turns',
    {
      bodyLimit: LARGE_BODY_LIMIT,
      schema: {
        summary: 'Record a turn (large content is stored as an output)',
        description: `${fenced} A repeated message_id answers 200 with the first seq and stores nothing.`,
        headers: epochHeaders,
        body: turnBody,
        response: { 201: recordTurnAnswer, 200: recordTurnAnswer },
      },
    },
    async (req, reply) => {
      const answer = await calls.recordTurn(req.auth, leaseEpoch(req), req.body);
      return reply.status(answer.duplicate ? 200 : 201).send(answer);
    },
  );
  r.get(
    '/v1/turns',
    { schema: { summary: 'Turns, a page backwards by seq', querystring: turnsQuery, response: { 200: turnsAnswer } } },
    async (req) => calls.turns(req.auth, req.query),
  );

  r.post(
    '/v1/outputs',
    {
      bodyLimit: LARGE_BODY_LIMIT,
      schema: {
        summary: 'Store an output by reference (at most 1 MiB; 413 above)',
        description: fenced,
        headers: epochHeaders,
        body: outputBody,
        response: { 201: outputInfoAnswer },
      },
    },
    async (req, reply) => reply.status(201).send(await calls.storeOutput(req.auth, leaseEpoch(req), req.body)),
  );
  r.get(
    '/v1/outputs',
    { schema: { summary: 'Outputs, newest first', querystring: outputsQuery, response: { 200: outputsAnswer } } },
    async (req) => calls.outputs(req.auth, req.query),
  );
  r.get(
    '/v1/outputs/:ref',
    {
      schema: {
        summary: 'One output with its content',
        params: outputParams,
        querystring: namespaceQuery,
        response: { 200: outputAnswer },
      },
    },
    async (req) => calls.output(req.auth, { ...req.query, ref: req.params.ref }),
  );

  r.get(
    '/v1/pointers',
    { schema: { summary: 'Pointers, a page by name', querystring: pointersQuery, response: { 200: pointersAnswer } } },
    async (req) => calls.pointers(req.auth, req.query),
  );
  r.put(
    '/v1/pointers/:name',
    {
      schema: {
        summary: 'Set a pointer to where the work lives',
        description: fenced,
        headers: epochHeaders,
        params: pointerParams,
        body: pointerBody,
        response: { 200: pointerAnswer },
      },
    },
    async (req) => calls.setPointer(req.auth, leaseEpoch(req), { ...req.body, name: req.params.name }),
  );
  r.delete(
    '/v1/pointers/:name',
    {
      schema: {
        summary: 'Remove a pointer (404 when there is none)',
        description: fenced,
        headers: epochHeaders,
        params: pointerParams,
        querystring: namespaceQuery,
        response: { 204: z.null().describe('Removed') },
      },
    },
    async (req, reply) => {
      await calls.removePointer(req.auth, leaseEpoch(req), { ...req.query, name: req.params.name });
      return reply.status(204).send(null);
    },
  );
}
