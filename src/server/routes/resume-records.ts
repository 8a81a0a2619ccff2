/**
 * @module
 * Resume record routes: working state (+ history), milestones, turns, outputs, pointers. Writes carry
 * the lease epoch in `X-Lease-Epoch` and are fenced in the store; reads are open to the agent and to
 * an admin of its tenant (the console). Thin: parse -> the resume call the MCP tool calls too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { invalidRequest } from '../../common/errors.ts';
import type { ResumeCalls } from '../calls/resume-calls.ts';
import {
  milestoneBody,
  namespaceQuery,
  outputBody,
  outputParams,
  outputsQuery,
  pointerBody,
  pointerParams,
  stateHistoryQuery,
  turnBody,
  turnsQuery,
  workingStatePatch,
} from '../schemas/resume.ts';
import { parseWith } from '../validate.ts';

/** The fencing header. */
export const EPOCH_HEADER = 'x-lease-epoch';

/** Body limit of turns and outputs, bytes: a 1 MiB content after JSON escaping (the content limit gives 413). */
export const LARGE_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * The writer's epoch from `X-Lease-Epoch`; undefined when absent (the call answers 409 `lease_not_held`).
 * @throws {TetherError} 400 naming `X-Lease-Epoch` when it is not an integer >= 1
 */
export function leaseEpoch(req: FastifyRequest): number | undefined {
  const raw = req.headers[EPOCH_HEADER];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  if (!/^[1-9][0-9]{0,15}$/.test(text.trim()) || !Number.isSafeInteger(Number(text))) {
    throw invalidRequest('X-Lease-Epoch', `must be an integer lease epoch (>= 1); got '${text.slice(0, 40)}'`);
  }
  return Number(text);
}

export async function resumeRecordRoutes(app: FastifyInstance, opts: { calls: ResumeCalls }): Promise<void> {
  const { calls } = opts;

  app.get('/v1/working-state', async (req) =>
    calls.workingState(req.auth, parseWith(namespaceQuery, req.query, 'query')),
  );
  app.get('/v1/working-state/history', async (req) =>
    calls.workingStateHistory(req.auth, parseWith(stateHistoryQuery, req.query, 'query')),
  );
  app.patch('/v1/working-state', async (req) =>
    calls.patchWorkingState(req.auth, leaseEpoch(req), parseWith(workingStatePatch, req.body)),
  );

  app.post('/v1/milestones', async (req, reply) => {
    const answer = await calls.addMilestone(req.auth, leaseEpoch(req), parseWith(milestoneBody, req.body));
    return reply.status(201).send(answer);
  });

  app.get('/v1/milestones', async (req) => calls.milestones(req.auth, parseWith(outputsQuery, req.query, 'query')));

  app.post('/v1/turns', { bodyLimit: LARGE_BODY_LIMIT }, async (req, reply) => {
    const answer = await calls.recordTurn(req.auth, leaseEpoch(req), parseWith(turnBody, req.body));
    return reply.status(answer.duplicate ? 200 : 201).send(answer);
  });
  app.get('/v1/turns', async (req) => calls.turns(req.auth, parseWith(turnsQuery, req.query, 'query')));

  app.post('/v1/outputs', { bodyLimit: LARGE_BODY_LIMIT }, async (req, reply) => {
    const answer = await calls.storeOutput(req.auth, leaseEpoch(req), parseWith(outputBody, req.body));
    return reply.status(201).send(answer);
  });
  app.get('/v1/outputs', async (req) => calls.outputs(req.auth, parseWith(outputsQuery, req.query, 'query')));
  app.get('/v1/outputs/:ref', async (req) => {
    const { ref } = parseWith(outputParams, req.params, 'ref');
    return calls.output(req.auth, { ...parseWith(namespaceQuery, req.query, 'query'), ref });
  });

  app.get('/v1/pointers', async (req) => calls.pointers(req.auth, parseWith(namespaceQuery, req.query, 'query')));
  app.put('/v1/pointers/:name', async (req) => {
    const { name } = parseWith(pointerParams, req.params, 'name');
    return calls.setPointer(req.auth, leaseEpoch(req), { ...parseWith(pointerBody, req.body), name });
  });
  app.delete('/v1/pointers/:name', async (req, reply) => {
    const { name } = parseWith(pointerParams, req.params, 'name');
    await calls.removePointer(req.auth, leaseEpoch(req), { ...parseWith(namespaceQuery, req.query, 'query'), name });
    return reply.status(204).send();
  });
}
