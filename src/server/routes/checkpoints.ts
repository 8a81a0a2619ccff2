/**
 * @module
 * Checkpoint routes, the wire of `TetherCheckpointSaver` (`src/langgraph/`): put a checkpoint, put a
 * task's pending writes, delete a thread (fenced: `X-Lease-Epoch`), and read checkpoints with their
 * pending writes. Thin: schemas in `schemas/checkpoints.ts`, logic in `calls/checkpoint-calls.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { CheckpointCalls } from '../calls/checkpoint-calls.ts';
import {
  CHECKPOINT_BODY_LIMIT,
  checkpointBody,
  checkpointsAnswer,
  checkpointsQuery,
  checkpointWritesBody,
  checkpointWritesQuery,
  deleteThreadAnswer,
  deleteThreadQuery,
  pendingWritesAnswer,
  putCheckpointAnswer,
  putWritesAnswer,
} from '../schemas/checkpoints.ts';
import { epochHeaders } from '../schemas/resume.ts';
import type { ZodTypeProvider } from '../zod-routes.ts';
import { leaseEpoch } from './resume-records.ts';

export async function checkpointRoutes(app: FastifyInstance, opts: { calls: CheckpointCalls }): Promise<void> {
  const { calls } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const fenced = 'Needs the lease: X-Lease-Epoch (409 lease_not_held / lease_lost otherwise; nothing stored).';

  r.put(
    '/v1/checkpoints',
    {
      bodyLimit: CHECKPOINT_BODY_LIMIT,
      schema: {
        summary: 'Store a LangGraph checkpoint (one of the same key is replaced)',
        description: fenced,
        headers: epochHeaders,
        body: checkpointBody,
        response: { 200: putCheckpointAnswer },
      },
    },
    async (req) => calls.put(req.auth, leaseEpoch(req), req.body),
  );
  r.post(
    '/v1/checkpoints/writes',
    {
      bodyLimit: CHECKPOINT_BODY_LIMIT,
      schema: {
        summary: "Store a task's pending writes against a checkpoint",
        description: `${fenced} A repeated (task_id, idx >= 0) keeps the first; a negative idx (error, interrupt…) replaces.`,
        headers: epochHeaders,
        body: checkpointWritesBody,
        response: { 200: putWritesAnswer },
      },
    },
    async (req) => calls.putWrites(req.auth, leaseEpoch(req), req.body),
  );
  r.delete(
    '/v1/checkpoints',
    {
      schema: {
        summary: "Delete a thread's checkpoints and pending writes (every checkpoint_ns)",
        description: fenced,
        headers: epochHeaders,
        querystring: deleteThreadQuery,
        response: { 200: deleteThreadAnswer },
      },
    },
    async (req) => calls.deleteThread(req.auth, leaseEpoch(req), req.query),
  );
  r.get(
    '/v1/checkpoints',
    {
      schema: {
        summary: 'Checkpoints with their pending writes, newest first within a thread',
        querystring: checkpointsQuery,
        response: { 200: checkpointsAnswer },
      },
    },
    async (req) => calls.list(req.auth, req.query),
  );
  r.get(
    '/v1/checkpoints/writes',
    {
      schema: {
        summary: 'The pending writes of one checkpoint',
        querystring: checkpointWritesQuery,
        response: { 200: pendingWritesAnswer },
      },
    },
    async (req) => calls.writes(req.auth, req.query),
  );
}
